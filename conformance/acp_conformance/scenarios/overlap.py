"""Requests that overlap a running prompt: ``$/cancel_request`` for it, and a second prompt
on the same session."""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import AgentExited, AgentTimeout, Response
from ..outcomes import NO_DEADLINE, Outcome, failed, not_applicable, passed, soft_failed
from ..requirements import check
from ._expect import brief, result_dict
from .check_context import AgentRun, CheckContext, text_prompt
from .prompting import (
    CANCEL,
    STOP_REASONS,
    CancelObservation,
    on_own_model,
    start_slow_turn,
    wait_turn_running,
)

REQUEST_CANCELLED = -32800
#: The least wait for a prompt's answer after ``$/cancel_request`` when session/cancel has
#: shown how quickly this agent ends a cancelled turn (see `_cancel_request_bound`).
CANCEL_REQUEST_FLOOR = 5.0

FIRST_TEXT = "First turn: the scripted model takes a moment to say this."
SECOND_TEXT = "Second turn: this text belongs to the second prompt only."
#: The first turn's model answer is slow enough that the second prompt surely arrives while
#: it runs (it is sent only once the model call is seen); the second answer is immediate.
OVERLAP_SCRIPT: list[dict[str, Any]] = [
    {"content": [{"type": "text", "text": FIRST_TEXT}], "latency": 1.0},
    {"content": [{"type": "text", "text": SECOND_TEXT}]},
]


def _stop_reason(response: Response) -> Any:
    return result_dict(response).get("stopReason")


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
    reason = _stop_reason(response)
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


def _message_text(update: dict[str, Any]) -> str | None:
    content = update.get("content")
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        text: str = content["text"]
        return text
    return None


def foreign_chunks(
    run: AgentRun, session_id: str, start: int, end: int, own_text: str
) -> list[int]:
    """Message/thought chunks of ``session_id`` in frames [start, end) whose text is not part
    of ``own_text`` (the running turn's answer): they belong to another turn."""
    seqs = []
    for frame in run.frames[start:end]:
        msg = frame.message
        if frame.direction != "a2c" or not isinstance(msg, dict):
            continue
        if msg.get("method") != "session/update" or not isinstance(msg.get("params"), dict):
            continue
        params = msg["params"]
        update = params.get("update")
        if params.get("sessionId") != session_id or not isinstance(update, dict):
            continue
        if update.get("sessionUpdate") not in ("agent_message_chunk", "agent_thought_chunk"):
            continue
        text = _message_text(update)
        if text is None or text not in own_text:
            seqs.append(frame.seq)
    return seqs


@check("prompt.one-turn-at-a-time", scenario=CANCEL)
async def a_second_prompt_never_interleaves(ctx: CheckContext) -> Outcome:
    run = await ctx.turn_agent(llm_script=OVERLAP_SCRIPT)
    session_id = await ctx.new_session(run)
    first = await run.live.start_request("session/prompt", text_prompt(session_id, "First."))
    if not await wait_turn_running(ctx, run, first):
        assert first.response is not None
        return not_applicable(
            f"the first prompt ended before a second could overlap it "
            f"({brief(first.response.frame, 120)})"
        )
    second = await run.live.start_request("session/prompt", text_prompt(session_id, "Second."))
    try:
        first_response = await first.wait()
    except (AgentTimeout, AgentExited) as exc:
        return failed(
            f"the first prompt did not answer once a second one was sent: {exc}",
            frames=[first.request.seq, second.request.seq],
        )
    try:
        second_response = await second.wait()
    except (AgentTimeout, AgentExited) as exc:
        return failed(
            f"the second prompt was neither rejected nor run after the first: {exc}",
            frames=[first.request.seq, second.request.seq, first_response.frame.seq],
        )
    frames = [
        first.request.seq,
        second.request.seq,
        first_response.frame.seq,
        second_response.frame.seq,
    ]
    mixed = foreign_chunks(
        run, session_id, second.request.seq, first_response.frame.seq, FIRST_TEXT
    )
    if mixed:
        return failed(
            f"{len(mixed)} message chunks of the second turn arrived before the first prompt's "
            f"response #{first_response.frame.seq}: the turns interleaved",
            frames=[*frames, *mixed[:5]],
        )
    second_first = second_response.frame.seq < first_response.frame.seq
    if (
        second_first
        and not second_response.is_error
        and _stop_reason(second_response) != ("cancelled")
    ):
        return failed(
            f"the second prompt finished ({_stop_reason(second_response)!r}) while the first "
            "was still running: the turns overlapped",
            frames=frames,
        )
    if second_response.is_error:
        return passed(
            f"the second prompt was rejected with error {second_response.error_code} while the "
            "first ran",
            frames=frames,
        )
    return passed(
        f"the second prompt was queued: it answered {_stop_reason(second_response)!r} after the "
        f"first answered {_stop_reason(first_response)!r}",
        frames=frames,
    )


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
            frames=[close.request.seq, close.frame.seq],
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
    if _stop_reason(response) == "cancelled":
        return passed("the closed session's prompt ended with stopReason cancelled", frames=frames)
    return failed(
        f"the closed session's prompt ended with {_stop_reason(response)!r}, not cancelled",
        frames=frames,
    )
