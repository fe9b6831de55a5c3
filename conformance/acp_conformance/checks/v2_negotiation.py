"""version.v2-* (negotiation): asked for version 2, the agent answers 1 or a valid v2
``initialize`` result, and asked for 3 it answers 2; once 2 is negotiated, what v2 changes at
once — ``session/new`` without ``mcpServers``, a ``session/prompt`` acknowledged with a
``messageId`` and finished by a ``state_update``, methods v2 removed — each answer validated
against ``schema/v2``. They run on the shared v2 agent of :mod:`..scenarios.v2_agent`. The
run-wide schema check validates the whole transcript of these runs against v2 as well
(:mod:`acp_conformance.versions`).
"""

from __future__ import annotations

from ..harness.agent_client import AgentExited, AgentTimeout
from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ..scenarios._expect import brief
from ..scenarios.check_context import AgentRun, CheckContext, text_prompt
from ..scenarios.v2_agent import (
    V2,
    V2_SCENARIO,
    answered_version,
    echo_outcome,
    echoes_any_version,
    is_idle,
    negotiated,
    spawn_v2,
    v2_check,
    v2_problems,
)


@check("version.v2-negotiation", scenario=V2_SCENARIO)
async def version_two_is_negotiated(ctx: CheckContext) -> Outcome:
    try:
        _, response = await negotiated(ctx)
        frames = [response.frame.seq]
        if response.is_error:
            return failed(f"initialize asking for 2 failed: {brief(response.frame)}", frames=frames)
        version = answered_version(response)
        if version == 1:
            return passed("asked for 2, the agent stays with 1", frames=frames)
        # Only an agent that claims a version other than 1 needs the echo probe.
        if (echoed := await echoes_any_version(ctx)) is not None:
            return echo_outcome(echoed)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"initialize was not answered: {exc}")
    if version != V2:
        return failed(f"asked for 2, got protocolVersion {version!r}", frames=frames)
    errors = v2_problems("initialize", "result", response.result)
    if errors:
        return failed("the v2 initialize result is invalid: " + "; ".join(errors), frames=frames)
    return passed("asked for 2, got a valid v2 answer", frames=frames)


@v2_check("version.v2-newer-version")
async def newer_version_gets_the_newest_supported(ctx: CheckContext, run: AgentRun) -> Outcome:
    try:
        _, three = await spawn_v2(ctx, 3)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"initialize was not answered: {exc}")
    version = answered_version(three)
    if version != V2:
        return failed(f"asked for 3, got protocolVersion {version!r}", frames=[three.frame.seq])
    return passed("asked for 3, got 2", frames=[three.frame.seq])


@v2_check("version.v2-session-new")
async def v2_session_new(ctx: CheckContext, run: AgentRun) -> Outcome:
    response = await run.live.request("session/new", {"cwd": str(ctx.work)})
    frames = [response.frame.seq]
    if response.is_error:
        return failed(f"v2 session/new failed: {brief(response.frame)}", frames=frames)
    errors = v2_problems("session/new", "result", response.result, ctx.config.v2_draft)
    if errors:
        return failed("invalid v2 session/new result: " + "; ".join(errors), frames=frames)
    return passed("v2 session/new answered in v2 shape", frames=frames)


@v2_check("version.v2-prompt-lifecycle")
async def v2_prompt_lifecycle(ctx: CheckContext, run: AgentRun) -> Outcome:
    created = await run.live.request("session/new", {"cwd": str(ctx.work)})
    session_id = created.result.get("sessionId") if isinstance(created.result, dict) else None
    if not isinstance(session_id, str):
        return failed(f"v2 session/new gave no session id: {brief(created.frame)}")
    since = len(run.frames)
    answer = await run.live.request("session/prompt", text_prompt(session_id, "hello"))
    if answer.is_error:
        return failed(f"v2 session/prompt failed: {brief(answer.frame)}", frames=[answer.frame.seq])
    errors = v2_problems("session/prompt", "result", answer.result, ctx.config.v2_draft)
    if errors:
        return failed("invalid v2 prompt answer: " + "; ".join(errors), frames=[answer.frame.seq])
    try:
        idle = await run.live.wait_for(
            lambda f: is_idle(f, session_id), since=since, what="state_update idle"
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"no state_update idle after the prompt: {exc}", frames=[answer.frame.seq])
    updates = [
        f
        for f in run.frames[since : idle.seq + 1]
        if f.direction == "a2c"
        and isinstance(f.message, dict)
        and f.message.get("method") == "session/update"
    ]
    draft = ctx.config.v2_draft
    bad = [
        f"#{f.seq}: {e}"
        for f in updates
        for e in v2_problems("session/update", "params", f.message.get("params"), draft)
    ]
    if bad:
        return failed("invalid v2 updates: " + "; ".join(bad[:3]), frames=[idle.seq])
    states = [
        f.message["params"]["update"].get("state")
        for f in updates
        if f.message["params"]["update"].get("sessionUpdate") == "state_update"
    ]
    if states[:1] != ["running"]:
        return failed(f"the turn's states were {states}, not running … idle", frames=[idle.seq])
    stop = idle.message["params"]["update"].get("stopReason")
    if not isinstance(stop, str):
        return failed("state_update idle without a stopReason", frames=[idle.seq])
    return passed(
        f"prompt acknowledged, turn ended with {stop}", frames=[answer.frame.seq, idle.seq]
    )


# ACP's text asks only that an unknown method "should" get -32601.
@v2_check("version.v2-removed-methods")
async def v1_only_methods_are_gone(ctx: CheckContext, run: AgentRun) -> Outcome:
    calls = {
        "session/load": {"sessionId": "missing", "cwd": str(ctx.work), "mcpServers": []},
        "session/set_mode": {"sessionId": "missing", "modeId": "default"},
        "authenticate": {"methodId": "none"},
    }
    frames = []
    for method, params in calls.items():
        response = await run.live.request(method, params)
        frames.append(response.frame.seq)
        if response.error_code != -32601:
            return failed(f"v2 {method} answered {brief(response.frame)}", frames=frames)
    return passed(
        "session/load, session/set_mode and authenticate are unknown in v2", frames=frames
    )
