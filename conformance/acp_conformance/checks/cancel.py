"""cancel.*: ending work early — session/cancel during a turn and during a pending
permission question (rows of the cut-turn family, :mod:`.cancelled_turns`, one body with
their v2 twins), ``$/cancel_request`` for a running prompt and for unknown ids."""

from __future__ import annotations

from ..harness.agent_client import AgentTimeout
from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ..scenarios._expect import brief
from ..scenarios.catalog import CANCEL, ENVELOPE
from ..scenarios.check_context import CheckContext
from ..scenarios.prompt_turns import (
    STOP_REASONS,
    CancelObservation,
    start_slow_turn,
    stop_reason_of,
)
from ..scenarios.quiet_probes import silence_until_barrier
from .cancelled_turns import V1_CANCEL, V1_CANCEL_WHILE_ASKING, judge_cut_turn
from .families import register_family


@check("cancel.cancel-request-unknown-ignored", scenario=ENVELOPE)
async def cancel_request_for_unknown_ids_is_ignored(ctx: CheckContext) -> Outcome:
    frames: list[int] = []
    # An integer and a string id, neither ever sent by the checker.
    for request_id in (987654321, "acp-conformance-no-such-request"):
        outcome = await silence_until_barrier(ctx, "$/cancel_request", {"requestId": request_id})
        if outcome.verdict.value != "pass":
            return outcome
        frames += outcome.frames
    return passed(
        "$/cancel_request for unknown integer and string ids got no answer and the agent "
        "stayed responsive",
        frames=frames,
    )


# The cancelled prompt (stopReason cancelled, nothing after its answer): rows of the
# cut-turn family, one body with their v2 twins.
register_family(V1_CANCEL, CANCEL, judge_cut_turn, module=__name__)


REQUEST_CANCELLED = -32800
#: The least wait for a prompt's answer after ``$/cancel_request`` when session/cancel has
#: shown how quickly this agent ends a cancelled turn (see `_cancel_request_bound`).
CANCEL_REQUEST_FLOOR = 5.0


@check("cancel.cancel-request-prompt", scenario=CANCEL)
async def cancel_request_ends_a_running_prompt(ctx: CheckContext) -> Outcome:
    turn = await start_slow_turn(ctx, "before it could be cancelled")
    if isinstance(turn, Outcome):
        return turn
    run, session_id, pending = turn.run, turn.session_id, turn.pending
    request_id = pending.request.message["id"]
    cancel = await run.live.notify("$/cancel_request", {"requestId": request_id})
    bound, evidence = _cancel_request_bound(ctx)
    try:
        response = await pending.wait(bound)
    except AgentTimeout:
        # Leave no turn running behind for the shutdown ladder.
        await run.live.notify("session/cancel", {"sessionId": session_id})
        return failed(
            f"the prompt (id {request_id!r}) did not answer within {bound:g} s of "
            f"$/cancel_request naming it{evidence}",
            frames=[pending.request.seq, cancel.seq],
        )
    frames = [pending.request.seq, cancel.seq, response.frame.seq]
    if response.is_error:
        if response.error_code == REQUEST_CANCELLED:
            return passed(
                "the prompt answered error -32800 (request cancelled; ACP allows it, "
                "stopReason cancelled is preferred)",
                frames=frames,
            )
        return failed(
            f"the cancelled prompt answered an error: {brief(response.frame)}", frames=frames
        )
    reason = stop_reason_of(response)
    if reason == "cancelled":
        return passed("the prompt answered stopReason cancelled", frames=frames)
    if reason in STOP_REASONS:
        return passed(
            f"the prompt had finished: it answered its normal result ({reason!r})", frames=frames
        )
    return failed(f"stopReason {reason!r} is not a valid stop reason", frames=frames)


def _cancel_request_bound(ctx: CheckContext) -> tuple[float, str]:
    """How long to wait for a prompt's answer after ``$/cancel_request``, and why.

    ACP sets no time for the answer; this SHOULD check asks whether the request is honoured.
    When this scenario has already cancelled a turn of the same agent with session/cancel,
    that says how quickly the agent ends a cancelled turn: a prompt still unanswered after
    three times as long (at least ``CANCEL_REQUEST_FLOOR``) is taken as not cancelled. When
    session/cancel did not end the turn within a full ``--timeout`` either, one more full
    wait shows nothing new. Otherwise the wait is ``--timeout``.
    """
    obs = ctx.runtime.memo.get("cancel")
    if not isinstance(obs, CancelObservation):
        return ctx.timeout, ""
    took = obs.seconds_to_answer
    if took is not None:
        bound = min(ctx.timeout, max(CANCEL_REQUEST_FLOOR, 3 * took))
        return bound, f" (session/cancel ended a turn of this agent within {took:.1f} s)"
    if obs.no_answer is not None:
        bound = min(ctx.timeout, CANCEL_REQUEST_FLOOR)
        return bound, f" (session/cancel did not end a turn either: {obs.no_answer})"
    return ctx.timeout, ""


# The prompt cancelled while its permission request waits, a row of the cut-turn family.
# Last in its scenario: the permission question it leaves unanswered retires the process.
register_family(V1_CANCEL_WHILE_ASKING, CANCEL, judge_cut_turn, module=__name__)
