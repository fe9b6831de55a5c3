"""version.v2-* (turns): the turns the official test kit drives on a v2 agent — a
``session/cancel`` sent as soon as the prompt is accepted ends the turn idle ``cancelled``
with nothing after it, a ``session/close`` of a busy session cancels its turn the same way,
and the accepted user message is reported during the turn. Each turn runs on a fresh v2 agent
of :mod:`..scenarios.v2_agent` with its own scripted model turns; the cancellation details
beyond these are in :mod:`.v2_cancel`.
"""

from __future__ import annotations

from ..harness.agent_client import AgentExited, AgentTimeout
from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ..scenarios._expect import brief
from ..scenarios.check_context import CheckContext
from ..scenarios.prompt_turns import CANCELLED_MODEL_TURN, cancelled_turn_wait
from ..scenarios.v2_agent import (
    V2_SCENARIO,
    echo_turn,
    idle_after,
    session_updates,
    slow_v2_turn,
    wait_idle,
)


@check("version.v2-cancel-ends-cancelled", scenario=V2_SCENARIO)
async def v2_cancel_ends_cancelled(ctx: CheckContext) -> Outcome:
    # A finite scripted turn (see CANCELLED_MODEL_TURN): an agent that ignores the cancel
    # ends it on its own, and its idle's stop reason is what is judged.
    turn = await slow_v2_turn(ctx, CANCELLED_MODEL_TURN)
    if isinstance(turn, Outcome):
        return turn
    run, session_id, answer = turn
    # As the official test kit does: cancel at once, while the agent may still be starting
    # the turn (loading its model client, say).
    cancel = await run.live.notify("session/cancel", {"sessionId": session_id})
    try:
        idle = await wait_idle(
            ctx, run, session_id, answer.frame.seq, at_least=max(30, cancelled_turn_wait(ctx))
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"no state_update idle after session/cancel: {exc}", frames=[cancel.seq])
    frames = [answer.frame.seq, cancel.seq, idle.seq]
    stop = idle.message["params"]["update"].get("stopReason")
    if stop != "cancelled":
        return failed(f"the cancelled turn ended idle with stopReason {stop!r}", frames=frames)
    barrier = await run.live.barrier()
    late = session_updates(run, session_id, idle.seq + 1, barrier.frame.seq)
    if late:
        kinds = sorted({str(u.get("sessionUpdate")) for _, u in late})
        return failed(
            f"{len(late)} updates ({', '.join(kinds)}) came after the cancelled idle",
            frames=[idle.seq, *[seq for seq, _ in late[:5]]],
        )
    return passed("cancel at acceptance: idle cancelled, nothing after it", frames=frames)


@check("version.v2-close-cancels-turn", scenario=V2_SCENARIO)
async def v2_close_cancels_turn(ctx: CheckContext) -> Outcome:
    turn = await slow_v2_turn(ctx)
    if isinstance(turn, Outcome):
        return turn
    run, session_id, answer = turn
    try:
        closed = await run.live.request(
            "session/close", {"sessionId": session_id}, timeout=max(ctx.timeout, 30)
        )
        idle = idle_after(run, session_id, answer.frame.seq) or await wait_idle(
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
    obs = await echo_turn(ctx)
    if isinstance(obs, Outcome):
        return obs
    run, session_id, answer, idle = obs
    message_id = answer.result.get("messageId") if isinstance(answer.result, dict) else None
    if not isinstance(message_id, str) or not message_id:
        return failed(f"the prompt answer names no messageId: {brief(answer.frame)}")
    echoes = [
        seq
        for seq, update in session_updates(run, session_id, answer.request.seq, idle.seq + 1)
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
