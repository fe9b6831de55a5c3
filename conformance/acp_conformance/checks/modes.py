"""modes.* and config.*: session modes and session config options, as session/new
advertises them.

That the current mode and the current config values are among the offered ones is judged
over every recorded session by :mod:`acp_conformance.judges.consistency`."""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import AgentTimeout, Response
from ..harness.recorder import Frame
from ..outcomes import Outcome, Verdict, failed, not_applicable, passed
from ..requirements import check
from ..scenarios._expect import expect_error, expect_result, result_dict, update_of
from ..scenarios.catalog import MODES
from ..scenarios.check_context import CheckContext


def _mode_ids(session: dict[str, Any]) -> tuple[str | None, list[str]]:
    modes = session.get("modes") or {}
    ids = [m.get("id") for m in modes.get("availableModes") or [] if isinstance(m, dict)]
    return modes.get("currentModeId"), [i for i in ids if isinstance(i, str)]


async def _session(ctx: CheckContext) -> tuple[Any, str, dict[str, Any]]:
    run = await ctx.agent()
    session_id, result = await ctx.new_session_result(run)
    return run, session_id, result


async def _set_some_mode(
    run: Any, session_id: str, result: dict[str, Any], *, or_current: bool
) -> tuple[str, Response, list[str]] | Outcome:
    """Set the first advertised mode other than the current one that the agent accepts
    (``or_current``: the current one last): the mode set, the answer and the modes refused
    before it; or the outcome when there is no mode or every one was refused.

    An agent may refuse one mode for a reason of its own (gemini-cli will not enable an
    auto-approving mode in an untrusted folder); the method works when any mode can be set.
    """
    current, ids = _mode_ids(result)
    if not ids:
        return not_applicable("session/new advertised no modes")
    refused: list[str] = []
    last: Outcome | None = None
    others = [i for i in ids if i != current]
    candidates = [*others, *([current] if or_current and current in ids else [])]
    if not candidates:
        return not_applicable(f"no advertised mode other than the current {current!r}")
    for target in candidates:
        response = await run.live.request(
            "session/set_mode", {"sessionId": session_id, "modeId": target}
        )
        last = expect_result(response, f"session/set_mode {target!r}")
        if last is None:
            return target, response, refused
        refused.append(target)
    assert last is not None
    last.reason = f"every advertised mode was refused; the last: {last.reason}"
    return last


@check("modes.set-mode-works", scenario=MODES)
async def set_mode_to_an_advertised_mode(ctx: CheckContext) -> Outcome:
    run, session_id, result = await _session(ctx)
    found = await _set_some_mode(run, session_id, result, or_current=True)
    if isinstance(found, Outcome):
        return found
    target, response, refused = found
    note = f" (refused first: {', '.join(refused)})" if refused else ""
    return passed(f"mode set to {target!r}{note}", frames=[response.frame.seq])


@check("modes.current-mode-update", scenario=MODES)
async def set_mode_sends_current_mode_update(ctx: CheckContext) -> Outcome:
    run, session_id, result = await _session(ctx)
    start = len(run.frames)
    found = await _set_some_mode(run, session_id, result, or_current=False)
    if isinstance(found, Outcome):
        if found.verdict is Verdict.FAIL:  # the agent refused every other mode: no change
            return not_applicable(f"no other mode could be set: {found.reason}")
        return found
    target, response, _ = found

    def is_update(frame: Frame) -> bool:
        update = update_of(frame, session_id) or {}
        return update.get("sessionUpdate") == "current_mode_update"

    try:
        frame = await run.live.wait_for(
            is_update, since=start, timeout=min(ctx.timeout, 1.0), what="current_mode_update"
        )
    except AgentTimeout:
        # ACP describes current_mode_update for changes the agent makes itself; after the
        # client's own set_mode the response is the confirmation, and no update is owed.
        return passed(
            f"session/set_mode to {target!r} was answered and no current_mode_update followed "
            "(none is required after the client's own change)",
            frames=[response.frame.seq],
        )
    got = frame.message["params"]["update"].get("currentModeId")
    if got != target:
        return failed(f"current_mode_update names {got!r}, not {target!r}", frames=[frame.seq])
    return passed("current_mode_update sent", frames=[frame.seq])


@check("modes.unknown-mode-rejected", scenario=MODES)
async def unknown_mode_is_rejected(ctx: CheckContext) -> Outcome:
    run, session_id, _ = await _session(ctx)
    response = await run.live.request(
        "session/set_mode", {"sessionId": session_id, "modeId": "acp-conformance-no-such-mode"}
    )
    return expect_error(response, (-32602,), "session/set_mode with an unknown mode")


def _option_values(option: dict[str, Any]) -> list[str]:
    values: list[str] = []
    for entry in option.get("options") or []:
        if not isinstance(entry, dict):
            continue
        if "value" in entry:
            values.append(entry["value"])
        for sub in entry.get("options") or []:  # grouped options
            if isinstance(sub, dict) and "value" in sub:
                values.append(sub["value"])
    return values


def _pick_change(options: list[Any]) -> tuple[str, Any] | None:
    """An option id and a different value to set it to."""
    for option in options:
        if not isinstance(option, dict) or not isinstance(option.get("id"), str):
            continue
        if option.get("type") == "boolean" and isinstance(option.get("currentValue"), bool):
            return option["id"], not option["currentValue"]
        values = _option_values(option)
        others = [v for v in values if v != option.get("currentValue")]
        if others:
            return option["id"], others[0]
    return None


@check("config.set-returns-full-list", scenario=MODES)
async def set_config_option_returns_every_option(ctx: CheckContext) -> Outcome:
    run, session_id, result = await _session(ctx)
    options = result.get("configOptions") or []
    change = _pick_change(options)
    if change is None:
        return not_applicable("no config option with a second value to switch to")
    config_id, value = change
    response = await run.live.request(
        "session/set_config_option",
        {"sessionId": session_id, "configId": config_id, "value": value},
    )
    if (
        bad := expect_result(response, f"session/set_config_option {config_id}={value!r}")
    ) is not None:
        return bad
    returned = result_dict(response).get("configOptions")
    if not isinstance(returned, list):
        return failed("the result has no configOptions list", frames=[response.frame.seq])
    advertised_ids = {o.get("id") for o in options if isinstance(o, dict)}
    returned_ids = {o.get("id") for o in returned if isinstance(o, dict)}
    if not advertised_ids <= returned_ids:
        return failed(
            f"configOptions lacks {sorted(map(str, advertised_ids - returned_ids))}",
            frames=[response.frame.seq],
        )
    current = next(
        (
            o.get("currentValue")
            for o in returned
            if isinstance(o, dict) and o.get("id") == config_id
        ),
        None,
    )
    if current != value:
        return failed(
            f"{config_id} reports currentValue {current!r}, expected {value!r}",
            frames=[response.frame.seq],
        )
    return passed(
        f"{config_id} set to {value!r}; {len(returned)} options returned",
        frames=[response.frame.seq],
    )


@check("config.unknown-id-rejected", scenario=MODES)
async def unknown_config_id_is_rejected(ctx: CheckContext) -> Outcome:
    run, session_id, _ = await _session(ctx)
    response = await run.live.request(
        "session/set_config_option",
        {"sessionId": session_id, "configId": "acp-conformance-no-such-option", "value": "x"},
    )
    return expect_error(response, (-32602,), "session/set_config_option with an unknown configId")


@check("config.unknown-value-rejected", scenario=MODES)
async def unknown_config_value_is_rejected(ctx: CheckContext) -> Outcome:
    run, session_id, result = await _session(ctx)
    select = next(
        (
            o
            for o in result.get("configOptions") or []
            if isinstance(o, dict) and o.get("type") == "select"
        ),
        None,
    )
    if select is None:
        return not_applicable("no select config option advertised")
    response = await run.live.request(
        "session/set_config_option",
        {
            "sessionId": session_id,
            "configId": select["id"],
            "value": "acp-conformance-no-such-value",
        },
    )
    return expect_error(
        response, (-32602,), f"session/set_config_option {select['id']} with a value not offered"
    )
