"""version.v2-* (turns): the turns the official test kit drives on a v2 agent — a
``session/cancel`` sent as soon as the prompt is accepted ends the turn idle ``cancelled``
with nothing after it, a ``session/close`` of a busy session cancels its turn the same way,
and the accepted user message is reported during the turn. Each turn runs on a fresh v2 agent
of :mod:`..scenarios.v2_agent` with its own scripted model turns; the cancel and the close
are rows of the cut-turn family (:mod:`.cancelled_turns`), and the cancellation details
beyond these are in :mod:`.v2_cancel`.
"""

from __future__ import annotations

from ..outcomes import Outcome, failed, passed
from ..scenarios._expect import brief, session_updates
from ..scenarios.check_context import CheckContext
from ..scenarios.observed_checks import check_given
from ..scenarios.v2_agent import V2_SCENARIO, EchoTurn, echo_turn
from .cancelled_turns import V2_TURN_CUTS, judge_cut_turn
from .families import register_family

# A turn cancelled, and a session closed, as soon as the prompt is accepted: rows of the
# cut-turn family, one body with their v1 twins.
register_family(V2_TURN_CUTS, V2_SCENARIO, judge_cut_turn, module=__name__)


@check_given("version.v2-user-message-echo", V2_SCENARIO, echo_turn)
async def v2_user_message_echo(ctx: CheckContext, obs: EchoTurn) -> Outcome:
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
