"""The protocol-v2 scenario's agents: what the ``version.v2-*`` checks run in and drive.

The checks share one agent that was sent a v2 ``initialize`` (``info``/``capabilities``;
replaced after a failed check), :func:`v2_run`. An agent that answers 1 stays a v1 agent, and
every v2 requirement is then not applicable; so is an agent that echoes whatever version it
is asked for (it answers 65535 to 65535, too, :func:`echoes_any_version`): its 2 does not mean
it speaks v2, and the echo is ``init.unsupported-version-not-echoed``'s failure.

Turns run on one shared v2 turn agent, each check in its own session with its own scripted
model turns (:func:`v2_turn_run`): a slow turn to cancel or close (:func:`slow_v2_turn`; cut
at once by a :class:`V2Cut`, :func:`cut_v2_turn`), and
one ordinary turn (:func:`echo_turn`, memoised) whose session new agents then resume with and
without a replay (:func:`v2_resumes`, memoised; :func:`fresh_v2_run`). :func:`v2_problems`
validates a message against ``schema/v2``. The checks are in the ``v2_*`` modules of
:mod:`acp_conformance.checks`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..harness.agent_client import AgentExited, AgentTimeout, Response
from ..harness.recorder import Frame
from ..outcomes import Outcome, failed, not_applicable, out_of_scope
from ..v2_drafts import NEWEST, older_draft_errors
from ._expect import brief, update_of
from .catalog import PROTOCOL_V2
from .check_context import AgentRun, CheckContext, bind_script, text_prompt
from .observed_checks import check_given
from .prompt_turns import CANCELLED_MODEL_TURN, SLOW_MODEL_TURN, SLOW_PROMPT, cancelled_turn_wait
from .turn_endings import V2_ENDING, CutTurn

V2 = 2
V2_SCENARIO = PROTOCOL_V2

#: The session updates that carry messages, the conversation's history (a resume without a
#: replay sends none; each names its messageId).
MESSAGE_KINDS = frozenset(
    {
        "user_message",
        "agent_message",
        "agent_thought",
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
    }
)


def _validation() -> Any:
    from acp_schema import validation  # lazily: jsonschema loads only when a v2 check runs

    return validation


def v2_initialize_params(version: int) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "info": {"name": "acp-conformance", "version": __version__},
        "capabilities": {},
    }


async def spawn_v2(
    ctx: CheckContext, version: int = V2, *, for_this_check: bool = False
) -> tuple[AgentRun, Response]:
    run = await ctx.spawn(initialize=False, for_this_check=for_this_check)
    params = v2_initialize_params(version)
    response = await run.live.request("initialize", params)
    if not response.is_error and isinstance(response.result, dict):
        run.init_params, run.init_result = params, response.result
    return run, response


def answered_version(response: Response) -> object:
    result = response.result if isinstance(response.result, dict) else {}
    return result.get("protocolVersion")


#: No agent can support this version: one that answers it back echoes any version it is asked.
UNKNOWABLE_VERSION = 65535


async def echoes_any_version(ctx: CheckContext) -> Response | None:
    """The agent's answer when it echoes a version it cannot know, else None (memoised)."""
    return await ctx.once("v2-echo", _echoed_version)


async def _echoed_version(ctx: CheckContext) -> Response | None:
    _, response = await spawn_v2(ctx, UNKNOWABLE_VERSION, for_this_check=True)
    if answered_version(response) != UNKNOWABLE_VERSION:
        return None
    # Its "2" means nothing either: judging those runs by the v2 schemas would charge the
    # one echo defect again, as schema failures.
    for run in ctx.runtime.runs:
        run.version_unknown = True
    return response


def echo_outcome(echoed: Response) -> Outcome:
    return out_of_scope(
        f"the agent echoes any version it is asked for (asked for {UNKNOWABLE_VERSION}, it "
        f"answered {brief(echoed.frame, 120)}), so its answer 2 does not show that it speaks "
        "v2; the echo is init.unsupported-version-not-echoed's failure",
        frames=[echoed.frame.seq],
    )


async def negotiated(ctx: CheckContext) -> tuple[AgentRun, Response]:
    """The scenario's v2 agent and its initialize answer (a new one after a failed check)."""
    memo = ctx.runtime.memo
    found: tuple[AgentRun, Response] | None = memo.get("v2-run")
    if found is None or not ctx.runtime.reusable(found[0]):
        found = memo["v2-run"] = await spawn_v2(ctx)
    ctx.current = found[0]
    return found


#: A v2 check's body: it judges the run that negotiated 2.
V2Body = Callable[[CheckContext, AgentRun], Awaitable[Outcome]]


async def v2_run(ctx: CheckContext) -> AgentRun | Outcome:
    """A run that negotiated 2, or the outcome that makes the check not applicable."""
    try:
        run, _ = await negotiated(ctx)
        if (declined := declined_v2(ctx)) is not None:
            return declined  # an agent that speaks v1 only: the v2 rules do not apply to it
        if (echoed := await echoes_any_version(ctx)) is not None:
            run.version_unknown = True
            return echo_outcome(echoed)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"initialize was not answered: {exc}")
    ctx.current = run
    return run


def declined_v2(ctx: CheckContext) -> Outcome | None:
    """Why the v2 rules do not apply, when this scenario's agent already answered another
    version to a v2 initialize; None when it speaks v2 or was not asked yet. It starts no
    agent, so a check may ask before deciding whether it needs one."""
    found: tuple[AgentRun, Response] | None = ctx.runtime.memo.get("v2-run")
    if found is None or answered_version(found[1]) == V2:
        return None
    return out_of_scope(f"the agent answered {brief(found[1].frame)} to version 2")


def v2_check(rule: str) -> Callable[[V2Body], V2Body]:
    """Bind ``body`` as the check of ``rule`` in the v2 scenario, given the run that negotiated
    2 (:func:`v2_run`); when there is none, the check's outcome is why."""
    return check_given(rule, V2_SCENARIO, v2_run)


def v2_problems(method: str, part: str, value: Any, draft: str = NEWEST) -> list[str]:
    """Schema errors of a v2 message part, as the graded ``draft`` (``--v2-draft``) sees them."""
    validation = _validation()
    if part == "params":
        errors: list[str] = validation.validate_params(method, value, version=V2)
    else:
        errors = validation.validate_result(method, value, version=V2)
    return older_draft_errors(draft, method, part, errors)


def is_idle(frame: Frame, session_id: str) -> bool:
    update = update_of(frame, session_id) or {}
    return update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"


async def fresh_v2_run(
    ctx: CheckContext, capabilities: dict[str, Any] | None = None, **spawn: Any
) -> AgentRun | Outcome:
    """A new v2 agent of its own (one that resumes a session another process made, or one a
    check initializes with client ``capabilities``); ``spawn`` goes to ``ctx.spawn``."""
    run = await v2_run(ctx)  # the negotiation and echo verdicts, memoised
    if isinstance(run, Outcome):
        return run
    try:
        fresh = await ctx.spawn(initialize=False, **spawn)
        params = v2_initialize_params(V2)
        if capabilities is not None:
            params["capabilities"] = capabilities
        response = await fresh.live.request("initialize", params, timeout=max(ctx.timeout, 30))
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"initialize was not answered: {exc}")
    if answered_version(response) != V2 or not isinstance(response.result, dict):
        return failed(f"asked for 2 again, got {brief(response.frame)}")
    fresh.init_params, fresh.init_result = params, response.result
    return fresh


async def v2_turn_run(ctx: CheckContext, llm_script: Any) -> AgentRun | Outcome:
    """The scenario's v2 turn agent, ready for one more check's turns (``llm_script``).

    Like the v1 turn agent (``ScenarioRuntime.turn_agent``): the first turn of a new process
    is the costly part (the agent may load its model SDK), so the turn checks share one v2
    process, each in its own session with its own scripted model turns. The process is
    replaced when it is no longer reusable (a failed check retires it, an unanswered request
    of the checker or of the agent holds it).
    """
    memo = ctx.runtime.memo
    shared: AgentRun | None = memo.get("v2-turn-run")
    if shared is None or not ctx.runtime.reusable(shared):
        fresh = await fresh_v2_run(ctx)
        if isinstance(fresh, Outcome):
            return fresh
        await _warm_up(ctx, fresh)
        shared = memo["v2-turn-run"] = fresh
    if shared.llm is not None:
        # Nothing is scripted for this check until it creates its session (v2_session binds
        # the script to it): calls the agent still makes for an earlier session are side calls.
        shared.llm.next_script(llm_script).await_session()
    ctx.current = shared
    return shared


async def _warm_up(ctx: CheckContext, run: AgentRun) -> None:
    """One echo turn before the first check's: the agent loads its model client, and the
    scripted model learns whether the agent offers tools. Not judged (the checks see for
    themselves); once it went wrong, later turn agents skip it."""
    memo = ctx.runtime.memo
    if run.llm is None or memo.get("v2-warm-up-failed"):
        return
    try:
        created = await run.live.request("session/new", {"cwd": str(ctx.work)})
        result = created.result if isinstance(created.result, dict) else {}
        session_id = result.get("sessionId")
        if not isinstance(session_id, str):
            memo["v2-warm-up-failed"] = True
            return
        prompt = text_prompt(session_id, "Warm-up turn: reply with anything.")
        answer = await run.live.request("session/prompt", prompt, timeout=max(ctx.timeout, 30))
        if answer.is_error:
            memo["v2-warm-up-failed"] = True
            return
        await wait_idle(ctx, run, session_id, answer.frame.seq)
    except (AgentTimeout, AgentExited):
        memo["v2-warm-up-failed"] = True


async def v2_session(ctx: CheckContext, run: AgentRun) -> str | Outcome:
    created = await run.live.request("session/new", {"cwd": str(ctx.work)})
    session_id = created.result.get("sessionId") if isinstance(created.result, dict) else None
    if not isinstance(session_id, str):
        return failed(f"v2 session/new gave no session id: {brief(created.frame)}")
    bind_script(run, session_id)
    return session_id


async def v2_turn_session(ctx: CheckContext, llm_script: Any) -> tuple[AgentRun, str] | Outcome:
    """The v2 turn agent (:func:`v2_turn_run`, with ``llm_script``) and a new session on it."""
    run = await v2_turn_run(ctx, llm_script)
    if isinstance(run, Outcome):
        return run
    session_id = await v2_session(ctx, run)
    if isinstance(session_id, Outcome):
        return session_id
    return run, session_id


async def accepted_prompt(
    ctx: CheckContext, run: AgentRun, session_id: str, text: str
) -> Response | Outcome:
    """``text`` prompted on a v2 session: the answer that accepts it (a failure if none)."""
    answer = await run.live.request(
        "session/prompt", text_prompt(session_id, text), timeout=max(ctx.timeout, 30)
    )
    if answer.is_error:
        return failed(f"v2 session/prompt failed: {brief(answer.frame)}", frames=[answer.frame.seq])
    return answer


async def prompted_to_idle(
    ctx: CheckContext, run: AgentRun, session_id: str, text: str
) -> tuple[Response, Frame] | Outcome:
    """``text`` prompted on a v2 session: the prompt's answer and the idle that ends its turn."""
    answer = await accepted_prompt(ctx, run, session_id, text)
    if isinstance(answer, Outcome):
        return answer
    try:
        idle = await wait_idle(ctx, run, session_id, answer.frame.seq)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"no state_update idle after the prompt: {exc}", frames=[answer.frame.seq])
    return answer, idle


async def slow_v2_turn(
    ctx: CheckContext, model_turn: dict[str, Any] | None = None
) -> tuple[AgentRun, str, Response] | Outcome:
    """The v2 turn agent with a new session whose slow scripted turn (``model_turn``, by
    default one that outlasts every wait) was just accepted: the starting point of every
    check that cancels or closes a running turn."""
    opened = await v2_turn_session(ctx, [model_turn or SLOW_MODEL_TURN])
    if isinstance(opened, Outcome):
        return opened
    run, session_id = opened
    # The same words as the v1 cancel checks' default (not --cancel-prompt: the scripted
    # model answers here, never the agent's own).
    answer = await accepted_prompt(ctx, run, session_id, SLOW_PROMPT)
    if isinstance(answer, Outcome):
        return answer
    return run, session_id, answer


@dataclass(frozen=True)
class V2Cut:
    """How a check cuts a v2 turn short: at once after its prompt is accepted, as the
    official test kit does (while the agent may still be starting the turn)."""

    #: ``session/cancel`` (a notification) or ``session/close`` (a request).
    method: str
    #: How the reasons name the cut.
    what: str
    #: ``_meta`` the cut carries, if any.
    meta: dict[str, Any] | None = None
    #: The scripted model turn that is cut (None: the slow one that outlasts every wait).
    model_turn: dict[str, Any] | None = None


#: A finite scripted turn (see CANCELLED_MODEL_TURN): an agent that ignores the cancel ends
#: it on its own, and its idle's stop reason is what is judged.
V2_CANCEL_AT_ONCE = V2Cut("session/cancel", "session/cancel", model_turn=CANCELLED_MODEL_TURN)
V2_CANCEL_WITH_META = V2Cut(
    "session/cancel",
    "a session/cancel with _meta",
    meta={"acp-conformance": {"reason": "user"}},
)
V2_CLOSE = V2Cut("session/close", "session/close of the busy session")


async def cut_v2_turn(ctx: CheckContext, cut: V2Cut) -> CutTurn | Outcome:
    """A slow v2 turn cut short by ``cut`` as soon as it is accepted, and the idle that
    ended it (or why none came within the wait)."""
    started = await slow_v2_turn(ctx, cut.model_turn)
    if isinstance(started, Outcome):
        return started
    run, session_id, answer = started
    params: dict[str, Any] = {"sessionId": session_id}
    if cut.meta is not None:
        params["_meta"] = cut.meta
    pending = None
    if cut.method == "session/close":
        pending = await run.live.start_request(cut.method, params)
        sent = pending.request
    else:
        sent = await run.live.notify(cut.method, params)
    turn = CutTurn(run, session_id, V2_ENDING, sent, lead=[answer.frame.seq])
    try:
        if pending is not None:
            turn.cut_answer = await pending.wait(max(ctx.timeout, 30))
        # At least as long as the finite turn takes and then a --timeout, and never under 30 s:
        # the first turn of a fresh agent may load its model SDK.
        at_least = max(30, cancelled_turn_wait(ctx))
        turn.end = await wait_idle(ctx, run, session_id, answer.frame.seq, at_least=at_least)
    except (AgentTimeout, AgentExited) as exc:
        turn.no_end = f"no state_update idle after {cut.what}: {exc}"
    return turn


async def wait_idle(
    ctx: CheckContext, run: AgentRun, session_id: str, since: int, *, at_least: float = 30
) -> Frame:
    # The first turn of a fresh agent may load its model SDK: a generous bound, never a MUST
    # timeout of its own (a missing idle fails the requirement for what it is).
    return await run.live.wait_for(
        lambda f: is_idle(f, session_id),
        since=since,
        timeout=max(ctx.timeout, at_least),
        what="state_update idle",
    )


#: The echo turn: its run, its session, the prompt's answer, the idle that ended it.
EchoTurn = tuple[AgentRun, str, Response, Frame]


async def echo_turn(ctx: CheckContext) -> EchoTurn | Outcome:
    """One ordinary v2 turn (memoised): the run, its session, the prompt answer, the idle."""
    found = await ctx.once("v2-echo-turn", _run_echo_turn)
    if not isinstance(found, Outcome):
        ctx.current = found[0]
    return found


async def _run_echo_turn(ctx: CheckContext) -> EchoTurn | Outcome:
    opened = await v2_turn_session(ctx, None)
    if isinstance(opened, Outcome):
        return opened
    run, session_id = opened
    turn = await prompted_to_idle(ctx, run, session_id, "hello")
    if isinstance(turn, Outcome):
        return turn
    return run, session_id, *turn


#: One resume of the echo turn's session: its label, run, answer and the barrier seq after it.
Resume = tuple[str, AgentRun, Response, int]


async def v2_resumes(ctx: CheckContext) -> list[Resume] | Outcome:
    """The echo turn's session resumed by a new v2 agent, with and without a replay
    (memoised): (label, run, answer, barrier seq) each."""
    return await ctx.once("v2-resumes", _run_resumes)


async def _run_resumes(ctx: CheckContext) -> list[Resume] | Outcome:
    turn = await echo_turn(ctx)
    if isinstance(turn, Outcome):
        # out of scope stays so (an agent that speaks v1 only has nothing to resume on v2)
        why = out_of_scope if turn.scope else not_applicable
        return why(f"no v2 session with a turn to resume ({turn.reason})")
    first, session_id, _, _ = turn
    if first.process is not None:
        # A client resumes after a restart; the session outlives the process that made it.
        first.exit = await ctx.runtime.shutdown(first)
    found = []
    for label, extra in (("replayFrom start", {"replayFrom": {"type": "start"}}), ("plain", {})):
        run = await fresh_v2_run(ctx)
        if isinstance(run, Outcome):
            return run
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


def _session_caps(run: AgentRun) -> dict[str, Any] | None:
    capabilities = (run.init_result or {}).get("capabilities")
    session = capabilities.get("session") if isinstance(capabilities, dict) else None
    return session if isinstance(session, dict) else None


async def v2_run_with_sessions(ctx: CheckContext, marker: str | None) -> AgentRun | Outcome:
    """The v2 agent when it advertises ``capabilities.session`` (and ``marker`` under it)."""
    run = await v2_run(ctx)
    if isinstance(run, Outcome):
        return run
    caps = _session_caps(run)
    if caps is None:
        return out_of_scope("the v2 agent does not advertise capabilities.session")
    if marker is not None and not isinstance(caps.get(marker), dict):
        return out_of_scope(f"the v2 agent does not advertise capabilities.session.{marker}")
    return run
