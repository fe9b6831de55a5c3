"""Session lifecycle: new, load, resume, list, close, delete, fork and unknown ids."""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import AgentExited, AgentTimeout, Response
from ..outcomes import NO_DEADLINE, Outcome, failed, not_applicable, passed, soft_failed
from ..requirements import check
from ._expect import (
    UNKNOWN_SESSION_CODES,
    expect_error,
    expect_result,
    result_dict,
    session_updates,
)
from .check_context import AgentRun, CheckContext, advertised, scenario, surface_value, text_prompt
from .wire import TURN_UPDATE_KINDS

SESSIONS = scenario("sessions", "session/new and the capability-gated session methods", weight=9)

UNKNOWN_SESSION = "acp-conformance-unknown-session"


def _frames(response: Response) -> list[int]:
    return [response.request.seq, response.frame.seq]


async def _session_with_history(ctx: CheckContext, run: AgentRun) -> tuple[str, Response]:
    """A session that has had one (text) prompt turn, so there is something to persist."""
    session_id = await ctx.new_session(run)
    response = await ctx.prompt_turn(run, text_prompt(session_id, "Say hello."))
    return session_id, response


def _turn_updates_between(run: AgentRun, session_id: str, start: int, end: int) -> list[int]:
    """Sequence numbers of the turn updates (message, thought, tool call, plan) of
    ``session_id`` among frames [start, end)."""
    updates = session_updates(run, session_id, start, end)
    return [seq for seq, update in updates if update.get("sessionUpdate") in TURN_UPDATE_KINDS]


@check("session.new-returns-id", scenario=SESSIONS)
async def new_session_returns_an_id(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    if (bad := expect_result(response, "session/new")) is not None:
        return bad
    session_id = result_dict(response).get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        return failed(f"session/new returned sessionId {session_id!r}", frames=_frames(response))
    return passed(f"sessionId {session_id!r}", frames=_frames(response))


@check("session.new-unique-ids", scenario=SESSIONS)
async def new_sessions_get_distinct_ids(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    first, second = await ctx.new_session(run), await ctx.new_session(run)
    if first == second:
        return failed(f"two session/new calls both returned {first!r}")
    return passed("two sessions, two ids")


@check("session.new-relative-cwd-rejected", scenario=SESSIONS)
async def relative_cwd_is_rejected(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request(
        "session/new", {"cwd": "relative/dir", "mcpServers": []}, deliberate=True
    )
    return expect_error(response, (-32602,), "session/new with a relative cwd")


@check("session.new-mcp-servers", scenario=SESSIONS)
async def mcp_server_list_is_accepted(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    if (bad := expect_result(response, "session/new with mcpServers []")) is not None:
        return bad
    return passed("mcpServers [] accepted", frames=_frames(response))


@check("session.unknown-id-rejected", scenario=SESSIONS)
async def unknown_session_ids_are_rejected(ctx: CheckContext) -> Outcome:
    surface = await ctx.surface()
    run = await ctx.agent()
    probes: list[tuple[str, dict[str, Any]]] = [
        ("session/prompt", text_prompt(UNKNOWN_SESSION, "hello")),
    ]
    # set_mode and set_config_option exist only for agents that advertise modes / options;
    # probing them elsewhere would judge methods the agent never offered.
    if advertised(surface_value(surface, "session.modes")):
        probes.append(("session/set_mode", {"sessionId": UNKNOWN_SESSION, "modeId": "default"}))
    if advertised(surface_value(surface, "session.configOptions")):
        probes.append(
            (
                "session/set_config_option",
                {"sessionId": UNKNOWN_SESSION, "configId": "model", "value": "x"},
            )
        )
    frames: list[int] = []
    failures: list[str] = []
    for method, params in probes:
        response = await run.live.request(method, params)
        outcome = expect_error(response, UNKNOWN_SESSION_CODES, f"{method} for an unknown session")
        frames += outcome.frames
        if outcome.verdict.value == "fail":
            streamed = run.live.updates(UNKNOWN_SESSION, since=response.request.seq)
            if streamed and not response.is_error:
                outcome.reason += (
                    f" (and the agent sent {len(streamed)} session/update for that id, "
                    "treating it as a session)"
                )
            failures.append(outcome.reason)
    if failures:
        return failed("; ".join(failures), frames=frames)
    names = ", ".join(method.removeprefix("session/") for method, _ in probes)
    return passed(f"{names} reject unknown sessions", frames=frames)


@check("session.new-unadvertised-mcp-transport", scenario=SESSIONS)
async def unadvertised_mcp_transport_does_not_break_the_agent(ctx: CheckContext) -> Outcome:
    surface = await ctx.surface()
    mcp = surface_value(surface, "agentCapabilities.mcpCapabilities")
    offered = mcp if isinstance(mcp, dict) else {}
    transport = next((t for t in ("http", "sse") if offered.get(t) is not True), None)
    if transport is None:
        return not_applicable("the agent advertises both the http and the sse MCP transport")
    run = await ctx.agent()
    # Port 9 (discard) refuses connections: an agent that tries the server anyway fails fast.
    server = {
        "type": transport,
        "name": "acp-conformance-probe",
        "url": "http://127.0.0.1:9/mcp",
        "headers": [],
    }
    what = f"session/new with an {transport} MCP server (mcpCapabilities.{transport} unadvertised)"
    try:
        response = await run.live.request(
            "session/new", {"cwd": str(ctx.work), "mcpServers": [server]}
        )
    except AgentExited:
        return failed(f"the agent exited after {what}")
    except AgentTimeout as exc:
        return soft_failed(f"no answer to {what}: {exc}", NO_DEADLINE)
    try:
        after = await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    except AgentExited:
        return failed(f"the agent exited after answering {what}", frames=_frames(response))
    if (bad := expect_result(after, f"a plain session/new after {what}")) is not None:
        return bad
    answer = f"error {response.error_code}" if response.is_error else "a session"
    return passed(
        f"{what} answered with {answer}; the agent stayed usable",
        frames=_frames(response) + _frames(after),
    )


@check("session.additional-directories", scenario=SESSIONS)
async def additional_directories_are_accepted(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    extra = ctx.runtime.tmp / "extra-root"
    extra.mkdir(exist_ok=True)
    response = await run.live.request(
        "session/new",
        {"cwd": str(ctx.work), "mcpServers": [], "additionalDirectories": [str(extra)]},
    )
    if (bad := expect_result(response, "session/new with additionalDirectories")) is not None:
        return bad
    return passed("additionalDirectories accepted", frames=_frames(response))


@check("session.load-replays-before-response", scenario=SESSIONS)
async def load_replays_history_before_responding(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id, prompt = await _session_with_history(ctx, run)
    streamed = _turn_updates_between(run, session_id, prompt.request.seq, prompt.frame.seq)
    if run.process is not None:
        # A client loads a session after a restart; an agent may answer a load of a session
        # it still has open without replaying it. So the session outlives its process and is
        # loaded by a new one (the scenario's next check gets a new shared agent).
        run.exit = await ctx.runtime.shutdown(run)
        run = await ctx.agent()
    start = len(run.frames)
    response = await run.live.request(
        "session/load", {"sessionId": session_id, "cwd": str(ctx.work), "mcpServers": []}
    )
    if (
        bad := expect_result(response, "session/load of a session an earlier process created")
    ) is not None:
        return bad
    barrier = await run.live.barrier()
    replayed = _turn_updates_between(run, session_id, start, response.frame.seq)
    late = _turn_updates_between(run, session_id, response.frame.seq, barrier.frame.seq)
    if late:
        return failed(
            f"{len(late)} replayed updates arrived after the load response",
            frames=[response.frame.seq, *late[:5]],
        )
    if streamed and not replayed:
        return failed(
            f"the turn streamed {len(streamed)} updates but load replayed none",
            frames=_frames(response),
        )
    return passed(f"{len(replayed)} updates replayed before the response", frames=_frames(response))


@check("session.load-state-before-response", scenario=SESSIONS)
async def load_sends_everything_before_responding(ctx: CheckContext) -> Outcome:
    """Nothing for the session, live state included, between a load's answer and a barrier."""
    run = await ctx.agent()
    session_id = await ctx.new_session(run)
    await run.live.barrier()  # session/new's own live state is behind us
    calls: list[tuple[str, dict[str, Any]]] = [
        ("session/load", {"sessionId": session_id, "cwd": str(ctx.work), "mcpServers": []})
    ]
    surface = await ctx.surface()
    if advertised(surface_value(surface, "agentCapabilities.sessionCapabilities.resume")):
        calls.append(
            ("session/resume", {"sessionId": session_id, "cwd": str(ctx.work), "mcpServers": []})
        )
    frames: list[int] = []
    for method, params in calls:
        response = await run.live.request(method, params)
        if (bad := expect_result(response, method)) is not None:
            return bad
        barrier = await run.live.barrier()
        late = session_updates(run, session_id, response.frame.seq, barrier.frame.seq)
        frames.append(response.frame.seq)
        if late:
            kinds = sorted({str(update.get("sessionUpdate")) for _, update in late})
            return failed(
                f"{len(late)} updates ({', '.join(kinds)}) arrived after the {method} response",
                frames=[response.frame.seq, *[seq for seq, _ in late[:5]]],
            )
    names = " and ".join(method for method, _ in calls)
    return passed(f"{names}: every update before the response", frames=frames)


@check("session.load-unknown-id", scenario=SESSIONS)
async def load_of_unknown_session_is_rejected(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request(
        "session/load", {"sessionId": UNKNOWN_SESSION, "cwd": str(ctx.work), "mcpServers": []}
    )
    return expect_error(response, UNKNOWN_SESSION_CODES, "session/load of an unknown session")


@check("session.resume-works", scenario=SESSIONS)
async def resume_does_not_replay(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id, _ = await _session_with_history(ctx, run)
    start = len(run.frames)
    response = await run.live.request(
        "session/resume", {"sessionId": session_id, "cwd": str(ctx.work), "mcpServers": []}
    )
    if (bad := expect_result(response, "session/resume")) is not None:
        return bad
    replayed = _turn_updates_between(run, session_id, start, response.frame.seq)
    if replayed:
        return failed(
            f"session/resume replayed {len(replayed)} history updates", frames=replayed[:5]
        )
    return passed("resumed without replay", frames=_frames(response))


@check("session.resume-unknown-id", scenario=SESSIONS)
async def resume_of_unknown_session_is_rejected(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request(
        "session/resume", {"sessionId": UNKNOWN_SESSION, "cwd": str(ctx.work), "mcpServers": []}
    )
    return expect_error(response, UNKNOWN_SESSION_CODES, "session/resume of an unknown session")


def _sessions_of(response: Response) -> list[Any] | None:
    sessions = result_dict(response).get("sessions")
    return sessions if isinstance(sessions, list) else None


@check("session.list-shape", scenario=SESSIONS)
async def list_returns_session_infos(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    await _session_with_history(ctx, run)
    response = await run.live.request("session/list", {})
    if (bad := expect_result(response, "session/list")) is not None:
        return bad
    sessions = _sessions_of(response)
    if sessions is None:
        return failed("session/list result has no sessions array", frames=_frames(response))
    for info in sessions:
        if (
            not isinstance(info, dict)
            or not isinstance(info.get("sessionId"), str)
            or not isinstance(info.get("cwd"), str)
        ):
            return failed(f"malformed session entry {info!r}", frames=_frames(response))
    return passed(f"{len(sessions)} sessions listed", frames=_frames(response))


@check("session.list-cwd-filter", scenario=SESSIONS)
async def list_filter_by_cwd(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    other = ctx.runtime.tmp / "other-cwd"
    other.mkdir(exist_ok=True)
    await run.live.request("session/new", {"cwd": str(other), "mcpServers": []})
    await _session_with_history(ctx, run)
    response = await run.live.request("session/list", {"cwd": str(ctx.work)})
    if (bad := expect_result(response, "session/list with cwd")) is not None:
        return bad
    sessions = _sessions_of(response) or []
    wrong = [s for s in sessions if isinstance(s, dict) and s.get("cwd") != str(ctx.work)]
    if wrong:
        return failed(
            f"cwd filter returned sessions of other directories: {wrong[:2]!r}",
            frames=_frames(response),
        )
    unused = ctx.runtime.tmp / "cwd-no-session-uses"
    empty = await run.live.request("session/list", {"cwd": str(unused)})
    if (bad := expect_result(empty, "session/list with a cwd no session uses")) is not None:
        return bad
    listed = result_dict(empty).get("sessions")
    if listed != []:
        return failed(
            f"session/list with a cwd no session uses answered sessions {listed!r}, not []",
            frames=_frames(empty),
        )
    return passed(
        f"{len(sessions)} sessions, all in the requested cwd; [] for a cwd no session uses",
        frames=_frames(response) + _frames(empty),
    )


@check("session.list-bad-cursor", scenario=SESSIONS)
async def list_rejects_unknown_cursor(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request("session/list", {"cursor": "acp-conformance-bogus-cursor"})
    return expect_error(response, (-32602,), "session/list with a cursor it never issued")


@check("session.close-works", scenario=SESSIONS)
async def close_ends_the_session(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id = await ctx.new_session(run)
    response = await run.live.request("session/close", {"sessionId": session_id})
    if (bad := expect_result(response, "session/close")) is not None:
        return bad
    after = await run.live.request("session/prompt", text_prompt(session_id, "still there?"))
    if not after.is_error:
        return failed("a prompt on a closed session succeeded", frames=_frames(after))
    return passed("closed; later prompt rejected", frames=_frames(response) + _frames(after))


async def _idempotent_or_invalid(ctx: CheckContext, method: str) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request(method, {"sessionId": UNKNOWN_SESSION})
    if response.is_error and response.error_code not in UNKNOWN_SESSION_CODES:
        return failed(
            f"{method} of an unknown id answered error {response.error_code}",
            frames=_frames(response),
        )
    return passed(
        f"{method} of an unknown id: "
        + (f"error {response.error_code}" if response.is_error else "success"),
        frames=_frames(response),
    )


@check("session.close-unknown-id", scenario=SESSIONS)
async def close_of_unknown_session(ctx: CheckContext) -> Outcome:
    return await _idempotent_or_invalid(ctx, "session/close")


@check("session.delete-works", scenario=SESSIONS)
async def delete_removes_the_session(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id, _ = await _session_with_history(ctx, run)
    response = await run.live.request("session/delete", {"sessionId": session_id})
    if (bad := expect_result(response, "session/delete")) is not None:
        return bad
    surface = await ctx.surface()
    caps = (surface.get("agentCapabilities") or {}).get("sessionCapabilities") or {}
    if caps.get("list") is None:
        return passed(
            "deleted (session/list not advertised, so not cross-checked)", frames=_frames(response)
        )
    listing = await run.live.request("session/list", {})
    ids = [s.get("sessionId") for s in _sessions_of(listing) or [] if isinstance(s, dict)]
    if session_id in ids:
        return failed("a deleted session is still listed", frames=_frames(listing))
    return passed("deleted and no longer listed", frames=_frames(response) + _frames(listing))


@check("session.delete-unknown-id", scenario=SESSIONS)
async def delete_of_unknown_session(ctx: CheckContext) -> Outcome:
    return await _idempotent_or_invalid(ctx, "session/delete")


@check("session.fork-works", scenario=SESSIONS)
async def fork_creates_a_new_session(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id, _ = await _session_with_history(ctx, run)
    response = await run.live.request(
        "session/fork", {"sessionId": session_id, "cwd": str(ctx.work), "mcpServers": []}
    )
    if (bad := expect_result(response, "session/fork")) is not None:
        return bad
    fork_id = result_dict(response).get("sessionId")
    if not isinstance(fork_id, str) or not fork_id or fork_id == session_id:
        return failed(
            f"session/fork returned sessionId {fork_id!r} (source {session_id!r})",
            frames=_frames(response),
        )
    return passed(f"forked into {fork_id!r}", frames=_frames(response))


@check("session.fork-unknown-id", scenario=SESSIONS)
async def fork_of_unknown_session_is_rejected(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request(
        "session/fork", {"sessionId": UNKNOWN_SESSION, "cwd": str(ctx.work), "mcpServers": []}
    )
    return expect_error(response, UNKNOWN_SESSION_CODES, "session/fork of an unknown session")
