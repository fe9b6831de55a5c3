"""version.v2-* (config): protocol version 2's session config options beyond their shapes (which
the v2 schema validation of every session result judges): ``session/set_config_option`` answers
the whole option list with the new value, and a ``config_option_update`` the agent sends on the
way carries the whole list as well. Out of scope for an agent whose v2 ``session/new`` offers no
select option with a second value to switch to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..harness.recorder import Frame
from ..outcomes import Outcome, failed, not_applicable, out_of_scope, passed
from ..requirements import check
from ..scenarios._expect import brief, session_updates
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.v2_agent import V2_SCENARIO, v2_problems, v2_run


@dataclass
class _Change:
    """One set_config_option exchange on a fresh v2 session."""

    run: AgentRun
    session_id: str
    offered: set[str]
    config_id: str
    value: str
    request: Frame
    answer: Frame
    result: Any
    barrier: int


def _values(options: Any) -> list[Any]:
    """The values a select option offers, flat or grouped."""
    values = []
    for entry in options if isinstance(options, list) else []:
        if not isinstance(entry, dict):
            continue
        if "value" in entry:
            values.append(entry["value"])
        for sub in entry.get("options") or [] if "groupId" in entry else []:
            if isinstance(sub, dict) and "value" in sub:
                values.append(sub["value"])
    return values


def _switchable(options: list[Any]) -> tuple[str, str] | None:
    """(configId, another value) of the first select option that has a second value."""
    for option in options:
        if not isinstance(option, dict) or option.get("type") != "select":
            continue
        others = [v for v in _values(option.get("options")) if v != option.get("currentValue")]
        if isinstance(option.get("configId"), str) and others and isinstance(others[0], str):
            return option["configId"], others[0]
    return None


def _ids(options: Any) -> set[str]:
    entries = options if isinstance(options, list) else []
    return {
        o["configId"] for o in entries if isinstance(o, dict) and isinstance(o.get("configId"), str)
    }


async def _change(ctx: CheckContext) -> _Change | Outcome:
    return await ctx.once("v2-config-change", _make_change)


async def _make_change(ctx: CheckContext) -> _Change | Outcome:
    run = await v2_run(ctx)
    if isinstance(run, Outcome):
        return run
    created = await run.live.request("session/new", {"cwd": str(ctx.work)})
    result = created.result if isinstance(created.result, dict) else {}
    session_id = result.get("sessionId")
    if created.is_error or not isinstance(session_id, str):
        return failed(f"v2 session/new failed: {brief(created.frame)}", frames=[created.frame.seq])
    options = result.get("configOptions")
    target = _switchable(options if isinstance(options, list) else [])
    if target is None:
        return out_of_scope("the v2 session/new offers no select option with a second value")
    config_id, value = target
    params = {"sessionId": session_id, "configId": config_id, "type": "id", "value": value}
    answer = await run.live.request("session/set_config_option", params)
    barrier = await run.live.barrier()
    return _Change(
        run,
        session_id,
        _ids(options),
        config_id,
        value,
        answer.request,
        answer.frame,
        None if answer.is_error else answer.result,
        barrier.frame.seq,
    )


@check("version.v2-set-config-full-list", scenario=V2_SCENARIO)
async def v2_set_config_option_answers_every_option(ctx: CheckContext) -> Outcome:
    change = await _change(ctx)
    if isinstance(change, Outcome):
        return change
    frames = [change.request.seq, change.answer.seq]
    what = f"session/set_config_option {change.config_id}={change.value!r}"
    if not isinstance(change.result, dict):
        return failed(f"{what} failed: {brief(change.answer)}", frames=frames)
    if errors := v2_problems("session/set_config_option", "result", change.result):
        return failed(f"invalid v2 {what} result: " + "; ".join(errors), frames=frames)
    options = change.result.get("configOptions") or []
    missing = sorted(change.offered - _ids(options))
    if missing:
        return failed(f"{what} answered without the options {missing}", frames=frames)
    changed = next(
        (o for o in options if isinstance(o, dict) and o.get("configId") == change.config_id),
        {},
    )
    if changed.get("currentValue") != change.value:
        return failed(
            f"{what} answered {change.config_id} with currentValue {changed.get('currentValue')!r}",
            frames=frames,
        )
    return passed(f"{what} answered all {len(change.offered)} options, the new value set")


# The config options page says the notification "also contains the complete configuration
# state", and the v2 schema describes it so: no MUST.
@check("version.v2-config-update-complete", scenario=V2_SCENARIO)
async def v2_config_update_lists_every_option(ctx: CheckContext) -> Outcome:
    change = await _change(ctx)
    if isinstance(change, Outcome):
        return change
    ctx.current = change.run
    sent = [
        (seq, update)
        for seq, update in session_updates(
            change.run, change.session_id, change.request.seq, change.barrier
        )
        if update.get("sessionUpdate") == "config_option_update"
    ]
    if not sent:
        return not_applicable("no config_option_update followed session/set_config_option")
    for seq, update in sent:
        missing = sorted(change.offered - _ids(update.get("configOptions")))
        if missing:
            return failed(
                f"a config_option_update left out the options {missing}",
                frames=[change.request.seq, seq],
            )
    return passed(f"{len(sent)} config_option_update(s) each listed every option")
