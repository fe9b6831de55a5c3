"""version.v2-* (resume order): a v2 ``session/resume`` — of the echo turn's session, by new
v2 agents, with a replay from the start and without one (:func:`..scenarios.v2_agent.v2_resumes`)
— sends every update before its answer, and a replay introduces each message with its
whole-message update before that message's chunks. What the official test kit judges of the
same resumes (the result, history, message ids) is in :mod:`.v2_resume_kit`.
"""

from __future__ import annotations

from ..outcomes import Outcome, failed, not_applicable, passed
from ..scenarios._expect import session_updates
from ..scenarios.check_context import CheckContext
from ..scenarios.observed_checks import check_given
from ..scenarios.turn_endings import late_update_failure
from ..scenarios.v2_agent import V2_SCENARIO, Resume, v2_resumes

_WHOLE_MESSAGE = {
    "user_message_chunk": "user_message",
    "agent_message_chunk": "agent_message",
    "agent_thought_chunk": "agent_thought",
}


@check_given("version.v2-resume-updates-before-answer", V2_SCENARIO, v2_resumes)
async def v2_resume_updates_before_answer(ctx: CheckContext, resumes: list[Resume]) -> Outcome:
    frames = []
    for label, run, answer, barrier in resumes:
        session_id = answer.request.message["params"]["sessionId"]
        late = session_updates(run, session_id, answer.frame.seq + 1, barrier)
        frames.append(answer.frame.seq)
        after = f"the answer to session/resume ({label})"
        if (failure := late_update_failure(late, after, answer.frame.seq)) is not None:
            ctx.current = run
            return failure
    return passed("every update of each resume came before its answer", frames=frames)


@check_given("version.v2-replay-message-whole-first", V2_SCENARIO, v2_resumes)
async def v2_replay_message_whole_first(ctx: CheckContext, resumes: list[Resume]) -> Outcome:
    label, run, answer, _ = resumes[0]
    ctx.current = run
    session_id = answer.request.message["params"]["sessionId"]
    introduced: set[str] = set()
    chunks = 0
    for seq, update in session_updates(run, session_id, answer.request.seq, answer.frame.seq):
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
