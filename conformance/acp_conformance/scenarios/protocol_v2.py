"""Protocol version 2: what changes when a client asks for 2 and the agent agrees.

The checks share one agent that was sent a v2 ``initialize`` (``info``/``capabilities``;
replaced after a failed check). An agent that answers 1 stays a v1 agent, and every other v2
requirement is then not applicable; so is an agent that echoes whatever version it is asked
for (it answers 65535 to 65535, too): its 2 does not mean it speaks v2, and the echo is
``init.unsupported-version-not-echoed``'s failure. When it answers 2, the checks drive what
v2 changes — ``session/new`` without ``mcpServers``, a ``session/prompt`` acknowledged with a
``messageId`` and finished by a ``state_update``, methods v2 removed — and validate each
answer against ``schema/v2``. The run-wide schema check validates the whole transcript of
these runs against v2 as well (:mod:`acp_conformance.versions`).
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from .. import __version__
from ..citations import acp, jsonrpc, rfd, schema_requires
from ..harness.agent_client import AgentExited, AgentTimeout, Response
from ..harness.recorder import Frame
from ..outcomes import Outcome, failed, not_applicable, out_of_scope, passed
from ..requirements import REQUIREMENTS, Requirement, Tier, check
from ._expect import brief
from .check_context import AgentRun, CheckContext, bind_script, scenario, text_prompt

V2 = 2
_REFERENCE = (
    acp("initialization", "Protocol version")
    + "; shapes: the ACP v2 draft schema 2.0.0-alpha.3 of the spec repository"
)


_V2_VERSION = (
    acp(
        "v2/initialization",
        "Protocol version",
        "If the Agent supports the requested version, it MUST respond with the same version. "
        "Otherwise, the Agent MUST respond with the latest version it supports",
    )
    + "; shapes: the ACP v2 draft schema as the official TypeScript SDK 2.4.0 ships it"
)
_V2_PROMPT = acp(
    "v2/prompt-lifecycle",
    "Prompt lifecycle",
    "When foreground work starts or resumes, the Agent MUST send a state_update notification "
    'with state: "running" ... it MUST report idle',
)
_V2_SHAPES = schema_requires("the v2 session/new params and result shapes", version=2)


def _register(
    id: str, tier: Tier, statement: str, *, llm: bool = False, reference: str = _REFERENCE
) -> None:
    if id in REQUIREMENTS:
        raise ValueError(f"duplicate requirement {id}")
    REQUIREMENTS[id] = Requirement(id, tier, statement, reference, None, llm)


_register(
    "version.v2-negotiation",
    Tier.MUST,
    "Asked for version 2, the agent answers 1 or 2; an answer of 2 is a valid v2 initialize "
    "result (info, capabilities).",
    reference=_V2_VERSION,
)
_register(
    "version.v2-newer-version",
    Tier.MUST,
    "Asked for version 3, an agent that speaks 2 answers 2, the newest version it supports.",
    reference=_V2_VERSION,
)
_register(
    "version.v2-session-new",
    Tier.MUST,
    "On a v2 connection session/new accepts params without mcpServers and answers a valid v2 "
    "result (no modes; configOptions by configId).",
    reference=_V2_SHAPES,
)
_register(
    "version.v2-prompt-lifecycle",
    Tier.MUST,
    "On a v2 connection session/prompt is answered with the user message's messageId, and the "
    "turn is reported by state_update running, then idle with a stopReason; every update is "
    "valid v2.",
    llm=True,
    reference=_V2_PROMPT,
)
# ACP's text asks only that an unknown method "should" get -32601.
_register(
    "version.v2-removed-methods",
    Tier.SHOULD,
    "On a v2 connection the v1-only methods session/load, session/set_mode and authenticate "
    "answer -32601 (method not found).",
)

_register(
    "version.v2-cancel-ends-cancelled",
    Tier.MUST,
    "On a v2 connection a session/cancel sent as soon as the prompt is accepted ends the turn "
    "with state_update idle, stopReason cancelled, and every update of the cancelled work comes "
    "before that idle.",
    llm=True,
    reference=acp(
        "prompt-turn",
        "Cancellation",
        "After all ongoing operations have been successfully aborted and pending updates have "
        "been sent, the Agent MUST respond ... with the cancelled stop reason",
    )
    + "; in v2 the stop reason is reported on the idle state_update",
)
_register(
    "version.v2-close-cancels-turn",
    Tier.MUST,
    "On a v2 connection session/close of a session with a turn in flight cancels that turn as "
    "session/cancel would (idle with stopReason cancelled, not an error) and answers a result.",
    llm=True,
    reference=acp(
        "v2/session-setup",
        "Closing sessions",
        "When closing cancels active foreground work, the Agent MUST send the final updates for "
        'that work and the idle state_update with stopReason: "cancelled" before responding',
    )
    + "; the official test kit's ACP-CANCEL-208",
)
_register(
    "version.v2-user-message-echo",
    Tier.MUST,
    "On a v2 connection the agent reports the accepted user message during the turn: a "
    "user_message (or user_message_chunk) update with the messageId the prompt answered.",
    llm=True,
    reference=acp(
        "v2/prompt-lifecycle",
        "Prompt Accepted",
        "the Agent MUST report where the user message was inserted in session history",
    ),
)
_register(
    "version.v2-resume-updates-before-answer",
    Tier.SHOULD,
    "A v2 session/resume (with replayFrom start, or without a replay) sends every update of "
    "the session, live state such as available_commands_update included, before its answer.",
    llm=True,
    reference=acp("v2/session-setup", "Resuming sessions")
    + "; clients (and the official test kit) read a resume up to its answer",
)
_register(
    "version.v2-replay-message-whole-first",
    Tier.SHOULD,
    "A v2 replay introduces each message with its whole-message update (user_message, "
    "agent_message, agent_thought with content []) before the chunks of that messageId.",
    llm=True,
    reference=rfd("v2/message-updates", "Message updates", "whole-message updates in a replay"),
)
_register(
    "version.v2-batch-basics",
    Tier.MUST,
    "On a v2 connection (whose draft allows JSON-RPC batches) an empty array gets one -32600 "
    "response object, and a batch of notifications gets no reply at all.",
    reference=jsonrpc(
        "§6 Batch",
        "batch",
        "the response from the Server MUST be a single Response object ... MUST NOT return an "
        "empty Array and should return nothing at all",
    ),
)
_register(
    "version.v2-batch-requests",
    Tier.SHOULD,
    "On a v2 connection a batch of requests is answered with one array of responses matched by "
    "id, and each invalid entry of a batch gets its own -32600 in that array.",
    reference=jsonrpc(
        "§6 Batch",
        "batch",
        "The Server should respond with an Array containing the corresponding Response objects",
    ),
)

V2_SCENARIO = scenario("protocol-v2", "protocol version 2 beside v1", weight=10)


def _validation() -> Any:
    return importlib.import_module("acp_schema.validation")


def _v2_initialize_params(version: int) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "info": {"name": "acp-conformance", "version": __version__},
        "capabilities": {},
    }


async def _spawn_v2(ctx: CheckContext, version: int = V2) -> tuple[AgentRun, Response]:
    run = await ctx.spawn(initialize=False)
    params = _v2_initialize_params(version)
    response = await run.live.request("initialize", params)
    if not response.is_error and isinstance(response.result, dict):
        run.init_params, run.init_result = params, response.result
    return run, response


def _answered_version(response: Response) -> object:
    result = response.result if isinstance(response.result, dict) else {}
    return result.get("protocolVersion")


#: No agent can support this version: one that answers it back echoes any version it is asked.
UNKNOWABLE_VERSION = 65535


async def _echoed(ctx: CheckContext) -> Response | None:
    """The agent's answer when it echoes a version it cannot know, else None (memoised)."""
    memo = ctx.runtime.memo
    if "v2-echo" not in memo:
        _, response = await _spawn_v2(ctx, UNKNOWABLE_VERSION)
        echoes = _answered_version(response) == UNKNOWABLE_VERSION
        memo["v2-echo"] = response if echoes else None
        if echoes:
            # Its "2" means nothing either: judging those runs by the v2 schemas would
            # charge the one echo defect again, as schema failures.
            for run in ctx.runtime.runs:
                run.version_unknown = True
    echoed: Response | None = memo["v2-echo"]
    return echoed


def _echo_outcome(echoed: Response) -> Outcome:
    return out_of_scope(
        f"the agent echoes any version it is asked for (asked for {UNKNOWABLE_VERSION}, it "
        f"answered {brief(echoed.frame, 120)}), so its answer 2 does not show that it speaks "
        "v2; the echo is init.unsupported-version-not-echoed's failure",
        frames=[echoed.frame.seq],
    )


async def _negotiated(ctx: CheckContext) -> tuple[AgentRun, Response]:
    """The scenario's v2 agent and its initialize answer (a new one after a failed check)."""
    memo = ctx.runtime.memo
    found: tuple[AgentRun, Response] | None = memo.get("v2-run")
    if found is None or not ctx.runtime.reusable(found[0]):
        found = memo["v2-run"] = await _spawn_v2(ctx)
    ctx.current = found[0]
    return found


async def _v2_run(ctx: CheckContext) -> tuple[AgentRun | None, Outcome | None]:
    """A run that negotiated 2, or the outcome that makes the check not applicable."""
    try:
        run, response = await _negotiated(ctx)
        if _answered_version(response) != V2:
            # An agent that speaks v1 only: the v2 rules do not apply to it.
            return None, out_of_scope(f"the agent answered {brief(response.frame)} to version 2")
        if (echoed := await _echoed(ctx)) is not None:
            run.version_unknown = True
            return None, _echo_outcome(echoed)
    except (AgentTimeout, AgentExited) as exc:
        return None, failed(f"initialize was not answered: {exc}")
    ctx.current = run
    return run, None


def _problems(method: str, part: str, value: Any) -> list[str]:
    validation = _validation()
    if part == "params":
        errors: list[str] = validation.validate_params(method, value, version=V2)
    else:
        errors = validation.validate_result(method, value, version=V2)
    return errors


@check("version.v2-negotiation", scenario=V2_SCENARIO)
async def version_two_is_negotiated(ctx: CheckContext) -> Outcome:
    try:
        _, response = await _negotiated(ctx)
        frames = [response.frame.seq]
        if response.is_error:
            return failed(f"initialize asking for 2 failed: {brief(response.frame)}", frames=frames)
        version = _answered_version(response)
        if version == 1:
            return passed("asked for 2, the agent stays with 1", frames=frames)
        # Only an agent that claims a version other than 1 needs the echo probe.
        if (echoed := await _echoed(ctx)) is not None:
            return _echo_outcome(echoed)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"initialize was not answered: {exc}")
    if version != V2:
        return failed(f"asked for 2, got protocolVersion {version!r}", frames=frames)
    errors = _problems("initialize", "result", response.result)
    if errors:
        return failed("the v2 initialize result is invalid: " + "; ".join(errors), frames=frames)
    return passed("asked for 2, got a valid v2 answer", frames=frames)


@check("version.v2-newer-version", scenario=V2_SCENARIO)
async def newer_version_gets_the_newest_supported(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
    try:
        _, three = await _spawn_v2(ctx, 3)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"initialize was not answered: {exc}")
    version = _answered_version(three)
    if version != V2:
        return failed(f"asked for 3, got protocolVersion {version!r}", frames=[three.frame.seq])
    return passed("asked for 3, got 2", frames=[three.frame.seq])


@check("version.v2-session-new", scenario=V2_SCENARIO)
async def v2_session_new(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
    response = await run.live.request("session/new", {"cwd": str(ctx.work)})
    frames = [response.frame.seq]
    if response.is_error:
        return failed(f"v2 session/new failed: {brief(response.frame)}", frames=frames)
    errors = _problems("session/new", "result", response.result)
    if errors:
        return failed("invalid v2 session/new result: " + "; ".join(errors), frames=frames)
    return passed("v2 session/new answered in v2 shape", frames=frames)


def _is_idle(frame: Frame, session_id: str) -> bool:
    msg = frame.message
    if not isinstance(msg, dict) or msg.get("method") != "session/update":
        return False
    params = msg.get("params") or {}
    update = params.get("update") or {}
    return (
        params.get("sessionId") == session_id
        and update.get("sessionUpdate") == "state_update"
        and update.get("state") == "idle"
    )


@check("version.v2-prompt-lifecycle", scenario=V2_SCENARIO)
async def v2_prompt_lifecycle(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
    created = await run.live.request("session/new", {"cwd": str(ctx.work)})
    session_id = created.result.get("sessionId") if isinstance(created.result, dict) else None
    if not isinstance(session_id, str):
        return failed(f"v2 session/new gave no session id: {brief(created.frame)}")
    since = len(run.frames)
    answer = await run.live.request("session/prompt", text_prompt(session_id, "hello"))
    if answer.is_error:
        return failed(f"v2 session/prompt failed: {brief(answer.frame)}", frames=[answer.frame.seq])
    errors = _problems("session/prompt", "result", answer.result)
    if errors:
        return failed("invalid v2 prompt answer: " + "; ".join(errors), frames=[answer.frame.seq])
    try:
        idle = await run.live.wait_for(
            lambda f: _is_idle(f, session_id), since=since, what="state_update idle"
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
    bad = [
        f"#{f.seq}: {e}"
        for f in updates
        for e in _problems("session/update", "params", f.message.get("params"))
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


@check("version.v2-removed-methods", scenario=V2_SCENARIO)
async def v1_only_methods_are_gone(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
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


# -- turns the official test kit drives: cancel, close, the user message echo -----------------

#: The prompt of a slow scripted turn (the same words as the v1 cancel checks use).
_SLOW_PROMPT = "Take your time: think about this for a while before answering."
_SLOW_MODEL_TURN = {
    "content": [{"type": "text", "text": "This answer comes too late."}],
    "latency": 60,
}


def _session_update(frame: Frame, session_id: str) -> dict[str, Any] | None:
    msg = frame.message
    if frame.direction != "a2c" or not isinstance(msg, dict):
        return None
    if msg.get("method") != "session/update":
        return None
    params = msg.get("params") or {}
    if not isinstance(params, dict) or params.get("sessionId") != session_id:
        return None
    update = params.get("update")
    return update if isinstance(update, dict) else None


def _updates(
    run: AgentRun, session_id: str, start: int, end: int
) -> list[tuple[int, dict[str, Any]]]:
    found = []
    for frame in run.frames[start:end]:
        update = _session_update(frame, session_id)
        if update is not None:
            found.append((frame.seq, update))
    return found


async def _v2_turn_run(
    ctx: CheckContext, llm_script: Any
) -> tuple[AgentRun | None, Outcome | None]:
    """A fresh v2 agent with its own scripted model turns (``llm_script``)."""
    run, skip = await _v2_run(ctx)  # the negotiation and echo verdicts, memoised
    if run is None:
        return None, skip
    try:
        fresh = await ctx.spawn(initialize=False, llm_script=llm_script)
        params = _v2_initialize_params(V2)
        response = await fresh.live.request("initialize", params, timeout=max(ctx.timeout, 30))
    except (AgentTimeout, AgentExited) as exc:
        return None, failed(f"initialize was not answered: {exc}")
    if _answered_version(response) != V2:
        return None, failed(f"asked for 2 again, got {brief(response.frame)}")
    fresh.init_params, fresh.init_result = params, response.result
    return fresh, None


async def _v2_session(ctx: CheckContext, run: AgentRun) -> str | Outcome:
    created = await run.live.request("session/new", {"cwd": str(ctx.work)})
    session_id = created.result.get("sessionId") if isinstance(created.result, dict) else None
    if not isinstance(session_id, str):
        return failed(f"v2 session/new gave no session id: {brief(created.frame)}")
    bind_script(run, session_id)
    return session_id


async def _accepted_slow_prompt(
    ctx: CheckContext, run: AgentRun, session_id: str
) -> Response | Outcome:
    answer = await run.live.request(
        "session/prompt", text_prompt(session_id, _SLOW_PROMPT), timeout=max(ctx.timeout, 30)
    )
    if answer.is_error:
        return failed(f"v2 session/prompt failed: {brief(answer.frame)}", frames=[answer.frame.seq])
    return answer


async def _slow_v2_turn(ctx: CheckContext) -> tuple[AgentRun, str, Response] | Outcome:
    """A fresh v2 agent with one session whose slow scripted turn was just accepted: the
    starting point of every check that cancels or closes a running turn."""
    run, skip = await _v2_turn_run(ctx, [_SLOW_MODEL_TURN])
    if run is None:
        assert skip is not None
        return skip
    session_id = await _v2_session(ctx, run)
    if isinstance(session_id, Outcome):
        return session_id
    answer = await _accepted_slow_prompt(ctx, run, session_id)
    if isinstance(answer, Outcome):
        return answer
    return run, session_id, answer


def _idle_after(run: AgentRun, session_id: str, since: int) -> Frame | None:
    for frame in run.frames[since:]:
        update = _session_update(frame, session_id)
        if (
            update
            and update.get("sessionUpdate") == "state_update"
            and update.get("state") == "idle"
        ):
            return frame
    return None


async def _wait_idle(ctx: CheckContext, run: AgentRun, session_id: str, since: int) -> Frame:
    # The first turn of a fresh agent may load its model SDK: a generous bound, never a MUST
    # timeout of its own (a missing idle fails the requirement for what it is).
    return await run.live.wait_for(
        lambda f: _is_idle(f, session_id),
        since=since,
        timeout=max(ctx.timeout, 30),
        what="state_update idle",
    )


@check("version.v2-cancel-ends-cancelled", scenario=V2_SCENARIO)
async def v2_cancel_ends_cancelled(ctx: CheckContext) -> Outcome:
    turn = await _slow_v2_turn(ctx)
    if isinstance(turn, Outcome):
        return turn
    run, session_id, answer = turn
    # As the official test kit does: cancel at once, while the agent may still be starting
    # the turn (loading its model client, say).
    cancel = await run.live.notify("session/cancel", {"sessionId": session_id})
    try:
        idle = await _wait_idle(ctx, run, session_id, answer.frame.seq)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"no state_update idle after session/cancel: {exc}", frames=[cancel.seq])
    frames = [answer.frame.seq, cancel.seq, idle.seq]
    stop = idle.message["params"]["update"].get("stopReason")
    if stop != "cancelled":
        return failed(f"the cancelled turn ended idle with stopReason {stop!r}", frames=frames)
    barrier = await run.live.barrier()
    late = _updates(run, session_id, idle.seq + 1, barrier.frame.seq)
    if late:
        kinds = sorted({str(u.get("sessionUpdate")) for _, u in late})
        return failed(
            f"{len(late)} updates ({', '.join(kinds)}) came after the cancelled idle",
            frames=[idle.seq, *[seq for seq, _ in late[:5]]],
        )
    return passed("cancel at acceptance: idle cancelled, nothing after it", frames=frames)


@check("version.v2-close-cancels-turn", scenario=V2_SCENARIO)
async def v2_close_cancels_turn(ctx: CheckContext) -> Outcome:
    turn = await _slow_v2_turn(ctx)
    if isinstance(turn, Outcome):
        return turn
    run, session_id, answer = turn
    try:
        closed = await run.live.request(
            "session/close", {"sessionId": session_id}, timeout=max(ctx.timeout, 30)
        )
        idle = _idle_after(run, session_id, answer.frame.seq) or await _wait_idle(
            ctx, run, session_id, answer.frame.seq
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"session/close of a busy session: {exc}", frames=[answer.frame.seq])
    frames = [answer.frame.seq, closed.frame.seq, idle.seq]
    if closed.is_error:
        return failed(f"session/close failed: {brief(closed.frame)}", frames=frames)
    update = idle.message["params"]["update"]
    if update.get("stopReason") != "cancelled":
        return failed(
            f"the closed session's turn ended idle with {brief(idle, 200)}",
            frames=frames,
        )
    return passed("close cancelled the turn (idle cancelled) and answered", frames=frames)


@check("version.v2-user-message-echo", scenario=V2_SCENARIO)
async def v2_user_message_echo(ctx: CheckContext) -> Outcome:
    obs = await _echo_turn(ctx)
    if isinstance(obs, Outcome):
        return obs
    run, session_id, answer, idle = obs
    message_id = answer.result.get("messageId") if isinstance(answer.result, dict) else None
    if not isinstance(message_id, str) or not message_id:
        return failed(f"the prompt answer names no messageId: {brief(answer.frame)}")
    echoes = [
        seq
        for seq, update in _updates(run, session_id, answer.request.seq, idle.seq + 1)
        if update.get("sessionUpdate") in ("user_message", "user_message_chunk")
        and update.get("messageId") == message_id
    ]
    frames = [answer.frame.seq, idle.seq]
    if not echoes:
        return failed(
            f"no user_message or user_message_chunk with messageId {message_id!r} during the turn",
            frames=frames,
        )
    return passed("the accepted user message was reported", frames=[*frames, echoes[0]])


async def _echo_turn(ctx: CheckContext) -> tuple[AgentRun, str, Response, Frame] | Outcome:
    """One ordinary v2 turn (memoised): the run, its session, the prompt answer, the idle."""
    memo = ctx.runtime.memo
    if "v2-echo-turn" not in memo:
        memo["v2-echo-turn"] = await _run_echo_turn(ctx)
    found: tuple[AgentRun, str, Response, Frame] | Outcome = memo["v2-echo-turn"]
    if not isinstance(found, Outcome):
        ctx.current = found[0]
    return found


async def _run_echo_turn(ctx: CheckContext) -> tuple[AgentRun, str, Response, Frame] | Outcome:
    run, skip = await _v2_turn_run(ctx, None)
    if run is None:
        assert skip is not None
        return skip
    session_id = await _v2_session(ctx, run)
    if isinstance(session_id, Outcome):
        return session_id
    answer = await run.live.request(
        "session/prompt", text_prompt(session_id, "hello"), timeout=max(ctx.timeout, 30)
    )
    if answer.is_error:
        return failed(f"v2 session/prompt failed: {brief(answer.frame)}", frames=[answer.frame.seq])
    try:
        idle = await _wait_idle(ctx, run, session_id, answer.frame.seq)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"no state_update idle after the prompt: {exc}", frames=[answer.frame.seq])
    return run, session_id, answer, idle


# -- resume: nothing after the answer; a replay introduces each message whole first ----------

_WHOLE_MESSAGE = {
    "user_message_chunk": "user_message",
    "agent_message_chunk": "agent_message",
    "agent_thought_chunk": "agent_thought",
}


async def _resumes(ctx: CheckContext) -> list[tuple[str, AgentRun, Response, int]] | Outcome:
    """The echo turn's session resumed by a new v2 agent, with and without a replay
    (memoised): (label, run, answer, barrier seq) each."""
    memo = ctx.runtime.memo
    if "v2-resumes" not in memo:
        memo["v2-resumes"] = await _run_resumes(ctx)
    found: list[tuple[str, AgentRun, Response, int]] | Outcome = memo["v2-resumes"]
    return found


async def _run_resumes(ctx: CheckContext) -> list[tuple[str, AgentRun, Response, int]] | Outcome:
    turn = await _echo_turn(ctx)
    if isinstance(turn, Outcome):
        return not_applicable(f"no v2 session with a turn to resume ({turn.reason})")
    first, session_id, _, _ = turn
    if first.process is not None:
        # A client resumes after a restart; the session outlives the process that made it.
        first.exit = await ctx.runtime.shutdown(first)
    found = []
    for label, extra in (("replayFrom start", {"replayFrom": {"type": "start"}}), ("plain", {})):
        run, skip = await _v2_turn_run(ctx, None)
        if run is None:
            assert skip is not None
            return skip
        answer = await run.live.request(
            "session/resume", {"sessionId": session_id, "cwd": str(ctx.work), **extra}
        )
        if answer.is_error:
            return failed(f"v2 session/resume ({label}) failed: {brief(answer.frame)}")
        barrier = await run.live.barrier()
        found.append((label, run, answer, barrier.frame.seq))
        if run.process is not None:
            run.exit = await ctx.runtime.shutdown(run)
    return found


@check("version.v2-resume-updates-before-answer", scenario=V2_SCENARIO)
async def v2_resume_updates_before_answer(ctx: CheckContext) -> Outcome:
    resumes = await _resumes(ctx)
    if isinstance(resumes, Outcome):
        return resumes
    frames = []
    for label, run, answer, barrier in resumes:
        session_id = answer.request.message["params"]["sessionId"]
        late = _updates(run, session_id, answer.frame.seq + 1, barrier)
        frames.append(answer.frame.seq)
        if late:
            kinds = sorted({str(u.get("sessionUpdate")) for _, u in late})
            ctx.current = run
            return failed(
                f"session/resume ({label}): {len(late)} updates ({', '.join(kinds)}) after its "
                "answer",
                frames=[answer.frame.seq, *[seq for seq, _ in late[:5]]],
            )
    return passed("every update of each resume came before its answer", frames=frames)


@check("version.v2-replay-message-whole-first", scenario=V2_SCENARIO)
async def v2_replay_message_whole_first(ctx: CheckContext) -> Outcome:
    resumes = await _resumes(ctx)
    if isinstance(resumes, Outcome):
        return resumes
    label, run, answer, _ = resumes[0]
    ctx.current = run
    session_id = answer.request.message["params"]["sessionId"]
    introduced: set[str] = set()
    chunks = 0
    for seq, update in _updates(run, session_id, answer.request.seq, answer.frame.seq):
        kind = update.get("sessionUpdate")
        message_id = update.get("messageId")
        if kind in _WHOLE_MESSAGE.values() and isinstance(message_id, str):
            introduced.add(message_id)
        elif kind in _WHOLE_MESSAGE:
            chunks += 1
            if message_id not in introduced:
                return failed(
                    f"replayed {kind} of messageId {message_id!r} before any "
                    f"{_WHOLE_MESSAGE[str(kind)]} update for it",
                    frames=[answer.request.seq, seq],
                )
    if not chunks and not introduced:
        return not_applicable(f"session/resume ({label}) replayed no messages")
    return passed(
        f"{len(introduced)} replayed messages each started whole", frames=[answer.frame.seq]
    )


# -- JSON-RPC batches (the v2 draft allows a non-empty array of messages on a line) ----------


def _is_reply(frame: Frame) -> bool:
    msg = frame.message
    if isinstance(msg, list):
        return True
    return isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg)


async def _send_batch(run: AgentRun, entries: list[Any]) -> Frame:
    data = json.dumps(entries, separators=(",", ":")).encode("utf-8")
    frame: Frame = await run.live.send_line(data, deliberate=True)
    return frame


@check("version.v2-batch-basics", scenario=V2_SCENARIO)
async def v2_batch_basics(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
    sent = await _send_batch(run, [])
    try:
        reply = await run.live.wait_for(
            lambda f: f.seq > sent.seq and _is_reply(f), since=sent.seq, what="a reply to []"
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"an empty batch was not answered: {exc}", frames=[sent.seq])
    msg = reply.message
    error = msg.get("error") if isinstance(msg, dict) else None
    if not isinstance(error, dict) or error.get("code") != -32600 or msg.get("id") is not None:
        return failed(
            f"an empty batch must get one -32600 object with id null, got {brief(reply)}",
            frames=[sent.seq, reply.seq],
        )
    note = await _send_batch(run, [{"jsonrpc": "2.0", "method": "_acp_conformance/note"}])
    barrier = await run.live.barrier()
    replies = [
        f.seq
        for f in run.frames[note.seq + 1 : barrier.frame.seq]
        if f.direction == "a2c" and _is_reply(f)
    ]
    if replies:
        return failed("a batch of notifications was answered", frames=[note.seq, *replies[:3]])
    return passed(
        "[] got one -32600; a notification batch got no reply", frames=[sent.seq, reply.seq]
    )


@check("version.v2-batch-requests", scenario=V2_SCENARIO)
async def v2_batch_requests(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
    ids = ["acp-conformance-batch-a", "acp-conformance-batch-b"]
    sent = await _send_batch(
        run, [{"jsonrpc": "2.0", "id": rid, "method": "session/list", "params": {}} for rid in ids]
    )
    try:
        reply = await run.live.wait_for(
            lambda f: _is_reply(f), since=sent.seq + 1, what="the batch's response array"
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"a batch of requests was not answered: {exc}", frames=[sent.seq])
    answered = reply.message
    if not isinstance(answered, list) or sorted(
        str(item.get("id")) for item in answered if isinstance(item, dict)
    ) != sorted(ids):
        return failed(
            f"a batch of two requests must get one array with both ids, got {brief(reply)}",
            frames=[sent.seq, reply.seq],
        )
    invalid = await _send_batch(run, [17, True, None])
    try:
        errors = await run.live.wait_for(
            lambda f: _is_reply(f), since=invalid.seq + 1, what="answers to invalid entries"
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"a batch of invalid entries was not answered: {exc}", frames=[invalid.seq])
    items = errors.message if isinstance(errors.message, list) else [errors.message]
    codes = [item.get("error", {}).get("code") for item in items if isinstance(item, dict)]
    if codes != [-32600, -32600, -32600]:
        return failed(
            f"three invalid entries must get three -32600 answers, got {brief(errors)}",
            frames=[invalid.seq, errors.seq],
        )
    return passed(
        "requests answered in one array by id; invalid entries one -32600 each",
        frames=[sent.seq, reply.seq, invalid.seq, errors.seq],
    )
