"""session.*: the session lifecycle — new, load, resume, close, delete, fork, and closing a
session with a prompt running. Unknown session ids are the table of :mod:`.session_unknown`,
session/list is :mod:`.session_paging`."""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import AgentExited, AgentTimeout
from ..outcomes import (
    NO_DEADLINE,
    Outcome,
    failed,
    not_applicable,
    out_of_scope,
    passed,
    soft_failed,
)
from ..requirements import check
from ..scenarios._expect import (
    brief,
    exchange_frames,
    expect_error,
    expect_result,
    result_dict,
    session_updates,
)
from ..scenarios.catalog import CANCEL, SESSIONS
from ..scenarios.check_context import CheckContext, advertised, surface_value, text_prompt
from ..scenarios.prompt_turns import (
    on_own_model,
    start_slow_turn,
    stop_reason_of,
    turn_updates_between,
)
from .session_steps import listed_sessions, session_with_history


@check("session.new-returns-id", scenario=SESSIONS)
async def new_session_returns_an_id(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    if (bad := expect_result(response, "session/new")) is not None:
        return bad
    session_id = result_dict(response).get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        return failed(
            f"session/new returned sessionId {session_id!r}", frames=exchange_frames(response)
        )
    return passed(f"sessionId {session_id!r}", frames=exchange_frames(response))


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
    return await _session_new_accepts(ctx, "mcpServers []")


@check("session.new-unadvertised-mcp-transport", scenario=SESSIONS)
async def unadvertised_mcp_transport_does_not_break_the_agent(ctx: CheckContext) -> Outcome:
    surface = await ctx.surface()
    mcp = surface_value(surface, "agentCapabilities.mcpCapabilities")
    offered = mcp if isinstance(mcp, dict) else {}
    transport = next((t for t in ("http", "sse") if offered.get(t) is not True), None)
    if transport is None:
        return out_of_scope("the agent advertises both the http and the sse MCP transport")
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
        return failed(f"the agent exited after answering {what}", frames=exchange_frames(response))
    if (bad := expect_result(after, f"a plain session/new after {what}")) is not None:
        return bad
    answer = f"error {response.error_code}" if response.is_error else "a session"
    return passed(
        f"{what} answered with {answer}; the agent stayed usable",
        frames=exchange_frames(response, after),
    )


@check("session.additional-directories", scenario=SESSIONS)
async def additional_directories_are_accepted(ctx: CheckContext) -> Outcome:
    extra = ctx.runtime.tmp / "extra-root"
    extra.mkdir(exist_ok=True)
    return await _session_new_accepts(
        ctx, "additionalDirectories", additionalDirectories=[str(extra)]
    )


async def _session_new_accepts(ctx: CheckContext, what: str, **params: Any) -> Outcome:
    """Pass when session/new with ``params`` beside an absolute cwd and no MCP servers
    succeeds; ``what`` names the params in the outcome."""
    run = await ctx.agent()
    response = await run.live.request(
        "session/new", {"cwd": str(ctx.work), "mcpServers": [], **params}
    )
    if (bad := expect_result(response, f"session/new with {what}")) is not None:
        return bad
    return passed(f"{what} accepted", frames=exchange_frames(response))


@check("session.load-replays-before-response", scenario=SESSIONS)
async def load_replays_history_before_responding(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id, prompt = await session_with_history(ctx, run)
    streamed = turn_updates_between(run, session_id, prompt.request.seq, prompt.frame.seq)
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
    replayed = turn_updates_between(run, session_id, start, response.frame.seq)
    late = turn_updates_between(run, session_id, response.frame.seq, barrier.frame.seq)
    if late:
        return failed(
            f"{len(late)} replayed updates arrived after the load response",
            frames=[response.frame.seq, *late[:5]],
        )
    if streamed and not replayed:
        return failed(
            f"the turn streamed {len(streamed)} updates but load replayed none",
            frames=exchange_frames(response),
        )
    return passed(
        f"{len(replayed)} updates replayed before the response", frames=exchange_frames(response)
    )


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


@check("session.resume-works", scenario=SESSIONS)
async def resume_does_not_replay(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id, _ = await session_with_history(ctx, run)
    start = len(run.frames)
    response = await run.live.request(
        "session/resume", {"sessionId": session_id, "cwd": str(ctx.work), "mcpServers": []}
    )
    if (bad := expect_result(response, "session/resume")) is not None:
        return bad
    replayed = turn_updates_between(run, session_id, start, response.frame.seq)
    if replayed:
        return failed(
            f"session/resume replayed {len(replayed)} history updates", frames=replayed[:5]
        )
    return passed("resumed without replay", frames=exchange_frames(response))


@check("session.close-works", scenario=SESSIONS)
async def close_ends_the_session(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id = await ctx.new_session(run)
    response = await run.live.request("session/close", {"sessionId": session_id})
    if (bad := expect_result(response, "session/close")) is not None:
        return bad
    after = await run.live.request("session/prompt", text_prompt(session_id, "still there?"))
    if not after.is_error:
        return failed("a prompt on a closed session succeeded", frames=exchange_frames(after))
    return passed("closed; later prompt rejected", frames=exchange_frames(response, after))


@check("session.delete-works", scenario=SESSIONS)
async def delete_removes_the_session(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id, _ = await session_with_history(ctx, run)
    response = await run.live.request("session/delete", {"sessionId": session_id})
    if (bad := expect_result(response, "session/delete")) is not None:
        return bad
    surface = await ctx.surface()
    caps = (surface.get("agentCapabilities") or {}).get("sessionCapabilities") or {}
    if caps.get("list") is None:
        return passed(
            "deleted (session/list not advertised, so not cross-checked)",
            frames=exchange_frames(response),
        )
    listing = await run.live.request("session/list", {})
    ids = [s.get("sessionId") for s in listed_sessions(listing) or [] if isinstance(s, dict)]
    if session_id in ids:
        return failed("a deleted session is still listed", frames=exchange_frames(listing))
    return passed("deleted and no longer listed", frames=exchange_frames(response, listing))


@check("session.fork-works", scenario=SESSIONS)
async def fork_creates_a_new_session(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    session_id, _ = await session_with_history(ctx, run)
    response = await run.live.request(
        "session/fork", {"sessionId": session_id, "cwd": str(ctx.work), "mcpServers": []}
    )
    if (bad := expect_result(response, "session/fork")) is not None:
        return bad
    fork_id = result_dict(response).get("sessionId")
    if not isinstance(fork_id, str) or not fork_id or fork_id == session_id:
        return failed(
            f"session/fork returned sessionId {fork_id!r} (source {session_id!r})",
            frames=exchange_frames(response),
        )
    return passed(f"forked into {fork_id!r}", frames=exchange_frames(response))


@check("session.close-cancels-prompt", scenario=CANCEL)
async def close_ends_a_running_prompt(ctx: CheckContext) -> Outcome:
    return on_own_model(ctx, await _close_verdict(ctx))


async def _close_verdict(ctx: CheckContext) -> Outcome:
    turn = await start_slow_turn(ctx, "before the session could be closed")
    if isinstance(turn, Outcome):
        return turn
    run, session_id, pending = turn.run, turn.session_id, turn.pending
    if run.llm is not None and not run.llm.script.routed:
        await run.live.notify("session/cancel", {"sessionId": session_id})
        return not_applicable("the agent never made the slow model call: no turn to close on")
    close = await run.live.request("session/close", {"sessionId": session_id})
    if close.is_error:
        await run.live.notify("session/cancel", {"sessionId": session_id})
        return failed(
            f"session/close during a prompt failed: {brief(close.frame)}",
            frames=exchange_frames(close),
        )
    try:
        response = await pending.wait()
    except AgentTimeout:
        await run.live.notify("session/cancel", {"sessionId": session_id})
        return soft_failed(
            f"the prompt did not end within {ctx.timeout:g} s of session/close",
            NO_DEADLINE,
            frames=[pending.request.seq, close.frame.seq],
        )
    frames = [pending.request.seq, close.frame.seq, response.frame.seq]
    if response.is_error:
        return passed("the closed session's prompt ended with an error", frames=frames)
    if stop_reason_of(response) == "cancelled":
        return passed("the closed session's prompt ended with stopReason cancelled", frames=frames)
    return failed(
        f"the closed session's prompt ended with {stop_reason_of(response)!r}, not cancelled",
        frames=frames,
    )
