"""The cut-turn family: a running turn the checker cut short (``session/cancel``, or
``session/close`` of its session) ends ``cancelled``, and nothing of it comes after its end.

One check body (:func:`judge_cut_turn`) over a table of rows, v1 and v2 alike: a row names
its rule, how its turn is cut and observed (a :class:`..scenarios.turn_endings.CutTurn`,
whose :class:`..scenarios.turn_endings.TurnEnding` says how that protocol version ends a
turn: v1's prompt answer or v2's idle ``state_update`` carries the ``stopReason``), and which
of the judgements below its rule makes, in order. The rows are registered by the modules
whose place in the run order they keep: :data:`V1_CANCEL` and :data:`V1_CANCEL_WHILE_ASKING`
by :mod:`.cancel`, :data:`V2_TURN_CUTS` by :mod:`.v2_turns`, :data:`V2_CANCEL_META` by
:mod:`.v2_cancel`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from ..harness.agent_client import AgentTimeout
from ..harness.recorder import Frame
from ..judges.run_walk import agent_messages
from ..outcomes import Outcome, failed, not_applicable, passed
from ..scenarios._expect import brief
from ..scenarios.check_context import CheckContext, text_prompt
from ..scenarios.prompt_turns import observe_cancel, on_own_model, too_short
from ..scenarios.scripted_turns import USER_PROMPT, final_turn, scripted_tool, tool_turn
from ..scenarios.turn_endings import V1_ENDING, CutTurn, late_update_failure
from ..scenarios.v2_agent import V2_CANCEL_AT_ONCE, V2_CANCEL_WITH_META, V2_CLOSE, cut_v2_turn
from ..vocabularies import ToolSpec


@dataclass(frozen=True)
class CutTurnRow:
    """A rule of the family: the turn it judges and what it asks of that turn."""

    rule: str
    #: Runs the cut turn (or recalls it, when several rules judge one turn).
    observe: Callable[[CheckContext], Awaitable[CutTurn | Outcome]]
    #: How the reasons name the cut turn.
    subject: str
    #: The judgements the rule makes, in order; the first failure is the outcome.
    judges: tuple[Judgement, ...]
    #: The reason when every judgement holds.
    holds: str


#: One judgement of a cut turn: its failure (or not-applicable outcome), None when it holds.
Judgement = Callable[[CheckContext, CutTurn, CutTurnRow], Awaitable["Outcome | None"]]


async def judge_cut_turn(ctx: CheckContext, row: CutTurnRow) -> Outcome:
    turn = await row.observe(ctx)
    if isinstance(turn, Outcome):
        return turn
    ctx.current = turn.run
    for judge in row.judges:
        if (outcome := await judge(ctx, turn, row)) is not None:
            break
    else:
        outcome = passed(row.holds, frames=turn.frames)
    return on_own_model(ctx, outcome) if turn.ending.own_model_soft else outcome


async def ends_cancelled(ctx: CheckContext, turn: CutTurn, row: CutTurnRow) -> Outcome | None:
    """The turn ended, and with ``stopReason`` ``cancelled`` (not an error, not ``end_turn``)."""
    if turn.no_end is not None:
        return turn.ending.no_end(turn.no_end, turn.frames)
    assert turn.end is not None
    if turn.ending.is_error(turn.end):
        return failed(f"{row.subject} answered an error: {brief(turn.end)}", frames=turn.frames)
    if turn.stop_reason != "cancelled":
        return failed(
            f"{turn.ending.end_name} of {row.subject} says stopReason {turn.stop_reason!r}",
            frames=turn.frames,
        )
    return None


async def nothing_after_end(ctx: CheckContext, turn: CutTurn, row: CutTurnRow) -> Outcome | None:
    """No update of the turn came after the frame that ended it."""
    if turn.no_end is not None:
        return not_applicable(
            f"{row.subject} did not end within the wait, so nothing can follow its end "
            "(that is the failure of the rule on how it ends)"
        )
    assert turn.end is not None
    after = f"{turn.ending.end_name} of {row.subject}"
    return late_update_failure(await turn.updates_after_end(), after, turn.end.seq)


async def cut_answered(ctx: CheckContext, turn: CutTurn, row: CutTurnRow) -> Outcome | None:
    """The cut, when it is a request (``session/close``), was answered with a result."""
    answer = turn.cut_answer
    if answer is not None and answer.is_error:
        return failed(f"{answer.method} failed: {brief(answer.frame)}", frames=turn.frames)
    return None


def _answers_notification(frame: Frame) -> bool:
    """A response frame with a null id: the only answer a notification could ever get."""
    msg = frame.message
    return (
        frame.direction == "a2c"
        and isinstance(msg, dict)
        and "method" not in msg
        and ("result" in msg or "error" in msg)
        and msg.get("id") is None
    )


async def cut_not_answered(ctx: CheckContext, turn: CutTurn, row: CutTurnRow) -> Outcome | None:
    """The cut, a notification (``session/cancel``), got no response of any kind."""
    settled = await turn.settle()
    frames = turn.run.frames[turn.cut.seq : settled]
    replies = [f.seq for f in frames if _answers_notification(f)]
    if replies:
        return failed(
            f"{turn.cut.message.get('method')} was answered: {brief(turn.run.frames[replies[0]])}",
            frames=[turn.cut.seq, *replies[:3]],
        )
    return None


#: The file the turn cancelled during its permission request was to write (never granted).
NEVER_GRANTED = "cancelled.txt"
#: What that file holds when the second attempt finds it already there (see
#: :func:`_v1_cancelled_while_asking`); a write never granted must leave it so.
UNTOUCHED = "written by the checker before the turn\n"


async def nothing_written(ctx: CheckContext, turn: CutTurn, row: CutTurnRow) -> Outcome | None:
    """The write whose permission was never granted did not happen (the file is absent, or
    still holds what the checker put there)."""
    target = ctx.work / NEVER_GRANTED
    if target.exists() and target.read_text(encoding="utf-8", errors="replace") != UNTOUCHED:
        return failed(
            "the write happened although its permission was never granted", frames=turn.frames
        )
    return None


async def _v1_cancelled(ctx: CheckContext) -> CutTurn | Outcome:
    """The cancel scenario's cancelled prompt (run once, judged by both v1 rows)."""
    obs = await observe_cancel(ctx)
    if (na := too_short(obs)) is not None:
        return na
    assert obs.turn is not None  # the turn ran, so session/cancel was sent
    return obs.turn


async def _v1_cancelled_while_asking(ctx: CheckContext) -> CutTurn | Outcome:
    """A prompt cancelled while its permission request for a scripted write waits; the
    checker answers that request ``cancelled`` right after the cancel, as ACP has a v1
    client do (it never grants it).

    Some agents read the file they are about to write through the client's
    ``fs/read_text_file`` first and give the write up when the file is missing (gemini-cli
    does: its tool call fails before any permission is asked). For them the turn runs once
    more on a file that exists, so the rule is judged on them too; whether a new file can be
    written is ``turn.permission-allow``'s to judge."""
    spec = scripted_tool(ctx, "write")
    if isinstance(spec, Outcome):
        return spec
    turn = await _cancel_while_asking(ctx, spec)
    if turn is None:
        (ctx.work / NEVER_GRANTED).write_text(UNTOUCHED, encoding="utf-8")
        turn = await _cancel_while_asking(ctx, spec)
    assert turn is not None  # the target exists now, so the agent cannot miss it again
    return turn


async def _cancel_while_asking(ctx: CheckContext, spec: ToolSpec) -> CutTurn | Outcome | None:
    """The turn cut while its permission request waits; None when the turn ended without
    asking after the agent read the (missing) target through the client."""
    target = ctx.work / NEVER_GRANTED
    script = [tool_turn(spec, str(target), "never\n"), final_turn()]
    run = await ctx.turn_agent(permission="never", llm_script=script)
    session_id = await ctx.new_session(run)
    pending = await run.live.start_request("session/prompt", text_prompt(session_id, USER_PROMPT))
    # The wait also ends with the prompt's answer: once the turn is over, no permission
    # request for it can follow (a full --timeout of waiting for one proved nothing more).
    asked = await run.live.wait_for(
        lambda f: (
            (
                isinstance(f.message, dict)
                and f.message.get("method") == "session/request_permission"
            )
            or (pending.response is not None and f is pending.response.frame)
        ),
        since=pending.request.seq,
        timeout=ctx.timeout,
        what="a permission request",
    )
    if pending.response is not None and asked is pending.response.frame:
        if _read_the_missing_target(run.frames[pending.request.seq : asked.seq], target):
            return None
        return not_applicable("the turn ended without asking permission for the scripted write")
    cancel = await run.live.notify("session/cancel", {"sessionId": session_id})
    # A v1 client that cancels a turn MUST then answer its pending permission requests with
    # the cancelled outcome, and an agent may wait for that answer before it ends the turn.
    answer = {"outcome": {"outcome": "cancelled"}}
    refused = await run.live.send({"jsonrpc": "2.0", "id": asked.message["id"], "result": answer})
    turn = CutTurn(run, session_id, V1_ENDING, cancel, lead=[asked.seq], trail=[refused.seq])
    try:
        turn.end = (await pending.wait()).frame
    except AgentTimeout as exc:
        turn.no_end = f"{exc} after session/cancel"
    return turn


def _read_the_missing_target(frames: list[Frame], target: Path) -> bool:
    """Whether the agent asked the client to read ``target`` while it did not exist (and so
    got an error): such an agent gave the write up for the missing file, not for the tool."""
    if target.exists():
        return False
    for _, msg in agent_messages(frames, "fs/read_text_file"):
        params = msg.get("params")
        path = params.get("path") if isinstance(params, dict) else None
        if isinstance(path, str) and Path(path).resolve() == target.resolve():
            return True
    return False


async def _v2_cancelled_at_once(ctx: CheckContext) -> CutTurn | Outcome:
    return await cut_v2_turn(ctx, V2_CANCEL_AT_ONCE)


async def _v2_closed(ctx: CheckContext) -> CutTurn | Outcome:
    return await cut_v2_turn(ctx, V2_CLOSE)


async def _v2_cancelled_with_meta(ctx: CheckContext) -> CutTurn | Outcome:
    return await cut_v2_turn(ctx, V2_CANCEL_WITH_META)


#: v1: one prompt cancelled while its (finite) scripted turn runs, judged by two rules.
V1_CANCEL = (
    CutTurnRow(
        "cancel.prompt-returns-cancelled",
        _v1_cancelled,
        "the cancelled prompt",
        (ends_cancelled,),
        "stopReason cancelled",
    ),
    CutTurnRow(
        "cancel.no-updates-after-response",
        _v1_cancelled,
        "the cancelled prompt",
        (nothing_after_end,),
        "no updates after the response",
    ),
)

#: v1: a prompt cancelled while its permission request waits; last in the cancel scenario.
V1_CANCEL_WHILE_ASKING = (
    CutTurnRow(
        "cancel.during-tool-call",
        _v1_cancelled_while_asking,
        "the prompt cancelled during a permission request",
        (ends_cancelled, nothing_written),
        "stopReason cancelled while the permission request was pending",
    ),
)

#: v2, as the official test kit drives it: a turn cancelled, and a session closed, as soon
#: as its prompt is accepted; each its own turn.
V2_TURN_CUTS = (
    CutTurnRow(
        "version.v2-cancel-ends-cancelled",
        _v2_cancelled_at_once,
        "the cancelled turn",
        (ends_cancelled, nothing_after_end),
        "cancel at acceptance: idle cancelled, nothing after it",
    ),
    CutTurnRow(
        "version.v2-close-cancels-turn",
        _v2_closed,
        "the closed session's turn",
        (cut_answered, ends_cancelled),
        "close cancelled the turn (idle cancelled) and answered",
    ),
)

#: v2: a cancel that carries ``_meta`` is still a cancel, and a notification.
V2_CANCEL_META = (
    CutTurnRow(
        "version.v2-cancel-meta-not-answered",
        _v2_cancelled_with_meta,
        "the turn cancelled with _meta",
        (ends_cancelled, cut_not_answered),
        "the cancel with _meta ended the turn cancelled, unanswered",
    ),
)
