"""Prompt-turn fixtures: sample content blocks, a slow scripted model turn to cancel or to
overlap, the observation of a cancelled turn, and the note for turns on the agent's own
model (``--llm none``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio

from ..harness.agent_client import AgentTimeout, Pending, Response
from ..outcomes import (
    AGENTS_OWN_MODEL,
    Outcome,
    Verdict,
    not_applicable,
)
from ._expect import TURN_UPDATE_KINDS, brief, result_dict, session_updates
from .check_context import AgentRun, CheckContext, text_prompt
from .turn_endings import V1_ENDING, CutTurn


def turn_updates_between(run: AgentRun, session_id: str, start: int, end: int) -> list[int]:
    """Sequence numbers of the turn updates (message, thought, tool call, plan) of
    ``session_id`` among frames [start, end)."""
    updates = session_updates(run, session_id, start, end)
    return [seq for seq, update in updates if update.get("sessionUpdate") in TURN_UPDATE_KINDS]


STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}


#: Why a prompt's failure to finish is not held against an agent under ``--llm none``: the
#: checker points its model at an address where nothing listens.
UNREACHABLE_MODEL = (
    "under --llm none the agent's model is unreachable, so its turn cannot be judged"
)


# A 1x1 transparent PNG and a 44-byte silent WAV header, base64.
PNG_1PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


WAV_EMPTY = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="


#: Prompt text the checker's own fixture agents treat as "take a long time".
SLOW_PROMPT = "Take your time: think about this for a while before answering."


def slow_prompt(ctx: CheckContext) -> str:
    """The prompt of a turn that is to be cancelled (``--cancel-prompt``, else the default)."""
    return ctx.config.cancel_prompt or SLOW_PROMPT


def on_own_model(ctx: CheckContext, outcome: Outcome) -> Outcome:
    """``outcome`` judged as SHOULD when the turn ran on the agent's own model (``--llm
    none``): whether that turn was still running, or ended, is not the checker's to control."""
    if ctx.config.llm == "none" and outcome.verdict is Verdict.FAIL:
        outcome.soft = AGENTS_OWN_MODEL  # the more telling reason, over a plain late answer
    return outcome


def stop_reason_of(response: Response) -> Any:
    return result_dict(response).get("stopReason")


#: For LLM-backed agents: the model takes far longer than any bound, so the turn is running
#: when the checker cancels it.
SLOW_MODEL_TURN = {
    "content": [{"type": "text", "text": "This answer comes too late."}],
    "latency": 60,
}

#: How long the scripted model takes to answer the turn the cancel checks cancel: long
#: enough that the cancel comes while the turn runs, short enough that the turn of an agent
#: that ignores the cancel ends on its own within the checker's wait. ACP sets no time for
#: the answer but does say what it MUST be (stopReason cancelled), so that answer is judged,
#: as a MUST, instead of a wait that runs out (which could only be a SHOULD).
CANCELLED_TURN_SECONDS = 8.0
CANCELLED_MODEL_TURN = {
    "content": [{"type": "text", "text": "This answer comes after the cancel."}],
    "latency": CANCELLED_TURN_SECONDS,
}


def cancelled_turn_wait(ctx: CheckContext) -> float:
    """The wait for a cancelled prompt's answer: the rest of the scripted turn, and then
    one more ``--timeout`` for the agent to send the answer."""
    if ctx.config.llm == "none":
        return ctx.timeout
    return CANCELLED_TURN_SECONDS + ctx.timeout


_POLL = 0.05


async def wait_turn_running(ctx: CheckContext, run: AgentRun, pending: Pending) -> bool:
    """True once ``pending``'s prompt is known to be running, False if it answered first.

    With a scripted LLM the turn runs once the agent's main model call (not a side call such
    as a title) has arrived; without one, a prompt that has not answered within 1 s is taken
    to be running.
    """
    server = run.llm
    bound = ctx.timeout if server is not None else min(1.0, ctx.timeout)
    with anyio.move_on_after(bound):
        while pending.response is None:
            if server is not None and server.script.routed:
                return True
            with anyio.move_on_after(_POLL):
                await pending.arrived.wait()
    return pending.response is None


@dataclass
class SlowTurn:
    """A prompt whose slow model turn is running on the turn agent."""

    run: AgentRun
    session_id: str
    pending: Pending


async def start_slow_turn(ctx: CheckContext, before: str) -> SlowTurn | Outcome:
    """Start a slow turn on a new session of the turn agent; when the prompt ends before it
    is known to run, the check is not applicable (``before``: "before it could be ...")."""
    run = await ctx.turn_agent(llm_script=[SLOW_MODEL_TURN])
    session_id = await ctx.new_session(run)
    pending = await run.live.start_request(
        "session/prompt", text_prompt(session_id, slow_prompt(ctx))
    )
    if not await wait_turn_running(ctx, run, pending):
        assert pending.response is not None
        return not_applicable(f"the prompt ended {before} ({brief(pending.response.frame, 120)})")
    return SlowTurn(run, session_id, pending)


class CancelObservation:
    """One prompt that was cancelled while running (shared by the cancel checks)."""

    def __init__(self) -> None:
        self.run: AgentRun | None = None
        self.session_id = ""
        self.finished_early: Response | None = None
        self.concurrent: Response | None = None
        self.concurrent_error: str | None = None
        #: The cancelled turn, once session/cancel was sent.
        self.turn: CutTurn | None = None
        self.setup_error: str | None = None
        #: With a scripted LLM: the agent never made the (slow) main model call, so what was
        #: cancelled was not the model turn the checks are about.
        self.never_started = False

    @property
    def no_answer(self) -> str | None:
        """Why the cancelled prompt was never answered (the wait for it ran out)."""
        return None if self.turn is None else self.turn.no_end

    @property
    def seconds_to_answer(self) -> float | None:
        """How long the cancelled prompt took to answer once session/cancel was sent."""
        if self.turn is None or self.turn.end is None:
            return None
        return self.turn.end.t - self.turn.cut.t


async def observe_cancel(ctx: CheckContext) -> CancelObservation:
    """Run the cancelled turn once per scenario; later checks reuse what it observed
    (including the exception, if it could not be observed)."""
    memo = ctx.runtime.memo
    if "cancel" not in memo:
        try:
            memo["cancel"] = await _run_cancelled_turn(ctx)
        except Exception as exc:
            memo["cancel"] = exc
            raise
    found = memo["cancel"]
    if isinstance(found, Exception):
        raise found
    ctx.current = found.run
    return found


async def _run_cancelled_turn(ctx: CheckContext) -> CancelObservation:
    obs = CancelObservation()
    run = await ctx.turn_agent(llm_script=[CANCELLED_MODEL_TURN])
    obs.run = run
    obs.session_id = await ctx.new_session(run)
    pending: Pending = await run.live.start_request(
        "session/prompt", text_prompt(obs.session_id, slow_prompt(ctx))
    )
    if not await wait_turn_running(ctx, run, pending):
        obs.finished_early = pending.response
        return obs
    obs.never_started = run.llm is not None and not run.llm.script.routed
    try:
        obs.concurrent = await run.live.request(
            "session/new", {"cwd": str(ctx.work), "mcpServers": []}
        )
    except AgentTimeout as exc:
        obs.concurrent_error = str(exc)
    if pending.response is not None:
        obs.finished_early = pending.response
        return obs
    cancel = await run.live.notify("session/cancel", {"sessionId": obs.session_id})
    obs.turn = turn = CutTurn(run, obs.session_id, V1_ENDING, cancel)
    try:
        turn.end = (await pending.wait(cancelled_turn_wait(ctx))).frame
    except AgentTimeout as exc:
        turn.no_end = f"{exc} after session/cancel"
        return obs
    # Settled now, while the turn agent is surely still there: a failed check retires it.
    await turn.settle()
    return obs


def too_short(obs: CancelObservation) -> Outcome | None:
    if obs.never_started:
        return not_applicable(
            "the agent never made the slow model call within the bound, so no model turn "
            "was running to cancel"
        )
    if obs.finished_early is not None:
        return not_applicable(
            "the prompt ended within 1 s, before it could be cancelled "
            f"({brief(obs.finished_early.frame, 120)})"
        )
    return None
