"""version.v2-* (resume, as the kit judges it): protocol version 2's ``session/resume`` as the
official test kit judges it, on the resumes of :mod:`..scenarios.v2_agent` (the echo turn's
session, resumed by new v2 agents with a replay from the start and without one): a resume
answers a valid v2 result (its ``configOptions`` included), a resume without ``replayFrom``
replays no history, a replayed user message keeps the ``messageId`` its prompt was answered
with, and an advertised ``additionalDirectories`` is accepted on a resume too. Out of scope
for an agent that does not advertise ``capabilities.session`` (or, for the last one,
``session.additionalDirectories``). The order of a resume's updates is :mod:`.v2_resume`'s."""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import Response
from ..outcomes import Outcome, failed, not_applicable, passed
from ..requirements import check
from ..scenarios._expect import brief, exchange_frames, session_updates
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.observed_checks import check_given
from ..scenarios.v2_agent import (
    MESSAGE_KINDS,
    V2_SCENARIO,
    echo_turn,
    fresh_v2_run,
    v2_problems,
    v2_resumes,
    v2_run_with_sessions,
)

#: A resume: its run, its answer, the seq of the barrier after it.
Resumed = tuple[AgentRun, Response, int]


async def _resume(ctx: CheckContext, label: str) -> Resumed | Outcome:
    """The memoised resume of :mod:`..scenarios.v2_agent` named ``label`` ("plain" or "replayFrom
    start"): its run, its answer and the seq of the barrier after it."""
    found = await v2_run_with_sessions(ctx, None)
    if isinstance(found, Outcome):
        return found
    resumes = await v2_resumes(ctx)
    if isinstance(resumes, Outcome):
        return resumes
    for name, run, answer, barrier in resumes:
        if name == label:
            ctx.current = run
            return run, answer, barrier
    return not_applicable(f"no {label} resume was made")


async def _plain_resume(ctx: CheckContext) -> Resumed | Outcome:
    return await _resume(ctx, "plain")


async def _replayed_resume(ctx: CheckContext) -> Resumed | Outcome:
    return await _resume(ctx, "replayFrom start")


@check_given("version.v2-resume-result", V2_SCENARIO, _plain_resume)
async def v2_resume_answers_a_valid_result(ctx: CheckContext, found: Resumed) -> Outcome:
    _, answer, _ = found
    frames = [answer.frame.seq]
    if answer.is_error or not isinstance(answer.result, dict):
        return failed(f"v2 session/resume failed: {brief(answer.frame)}", frames=frames)
    if errors := v2_problems("session/resume", "result", answer.result, ctx.config.v2_draft):
        return failed("invalid v2 session/resume result: " + "; ".join(errors), frames=frames)
    options = answer.result.get("configOptions")
    count = len(options) if isinstance(options, list) else 0
    return passed(
        f"v2 session/resume answered a valid result ({count} config options)", frames=frames
    )


@check_given("version.v2-resume-no-replay", V2_SCENARIO, _plain_resume)
async def v2_resume_without_replay_sends_no_history(ctx: CheckContext, found: Resumed) -> Outcome:
    run, answer, _ = found
    session_id = answer.request.message["params"]["sessionId"]
    history = [
        (seq, update)
        for seq, update in session_updates(run, session_id, answer.request.seq, answer.frame.seq)
        if update.get("sessionUpdate") in MESSAGE_KINDS
    ]
    if history:
        kinds = sorted({str(u.get("sessionUpdate")) for _, u in history})
        return failed(
            f"session/resume without replayFrom replayed {len(history)} history updates "
            f"({', '.join(kinds)}) before its answer",
            frames=[answer.request.seq, *[seq for seq, _ in history[:5]], answer.frame.seq],
        )
    return passed(
        "session/resume without replayFrom sent no history before its answer",
        frames=exchange_frames(answer),
    )


def _texts(update: dict[str, Any]) -> list[str]:
    content = update.get("content")
    blocks = content if isinstance(content, list) else [content]
    return [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]


@check_given("version.v2-replay-keeps-message-id", V2_SCENARIO, _replayed_resume)
async def v2_replay_keeps_the_prompt_message_id(ctx: CheckContext, found: Resumed) -> Outcome:
    run, answer, _ = found
    turn = await echo_turn(ctx)
    if isinstance(turn, Outcome):
        return not_applicable(f"no v2 turn to compare with ({turn.reason})")
    _, session_id, prompted, _ = turn
    message_id = prompted.result.get("messageId") if isinstance(prompted.result, dict) else None
    if not isinstance(message_id, str) or not message_id:
        return not_applicable("the prompt answer named no messageId (version.v2-prompt-lifecycle)")
    prompt_texts = {
        block.get("text")
        for block in prompted.request.message["params"].get("prompt") or []
        if isinstance(block, dict)
    }
    users = [
        (seq, update)
        for seq, update in session_updates(run, session_id, answer.request.seq, answer.frame.seq)
        if update.get("sessionUpdate") in ("user_message", "user_message_chunk")
    ]
    if not users:
        return not_applicable("the replay included no user message (retention is the agent's)")
    if any(update.get("messageId") == message_id for _, update in users):
        return passed(
            f"the replayed user message kept its messageId {message_id!r}",
            frames=[prompted.frame.seq, answer.frame.seq],
        )
    renamed = [
        (seq, update)
        for seq, update in users
        if any(text in prompt_texts for text in _texts(update))
    ]
    if renamed:
        seq, update = renamed[0]
        return failed(
            f"the prompt answered messageId {message_id!r}, but its user message was replayed "
            f"as {update.get('messageId')!r}",
            frames=[prompted.frame.seq, seq],
        )
    return not_applicable("the replay did not include that prompt's user message")


@check("version.v2-resume-additional-directories", scenario=V2_SCENARIO)
async def v2_resume_accepts_additional_directories(ctx: CheckContext) -> Outcome:
    found = await v2_run_with_sessions(ctx, "additionalDirectories")
    if isinstance(found, Outcome):
        return found
    await v2_resumes(ctx)  # the echo turn's process has stopped: the session is on disk only
    turn = await echo_turn(ctx)
    if isinstance(turn, Outcome):
        return not_applicable(f"no v2 session to resume ({turn.reason})")
    session_id = turn[1]
    # Stopped as this check ends, as the other resumes' agents are: left idle with a session
    # open until the scenario ends, an agent may load its model SDK for nothing (~2 CPU-s).
    run = await fresh_v2_run(ctx, for_this_check=True)
    if isinstance(run, Outcome):
        return run
    extra = ctx.runtime.tmp / "v2-resume-extra-root"
    extra.mkdir(exist_ok=True)
    answer = await run.live.request(
        "session/resume",
        {"sessionId": session_id, "cwd": str(ctx.work), "additionalDirectories": [str(extra)]},
    )
    frames = exchange_frames(answer)
    if answer.is_error:
        return failed(
            f"v2 session/resume with an additional directory failed: {brief(answer.frame)}",
            frames=frames,
        )
    return passed("v2 session/resume accepted an absolute additional directory", frames=frames)
