"""prompt.*: the prompt turn — content blocks the agent accepts (the table of
:mod:`.prompt_content`), requests answered during a turn, one turn at a time per session,
permission questions naming the announced tool call.

The prompt rules judged over every recorded turn (updates before the response, updates
naming a known and the prompted session) are run-wide judges in :mod:`acp_conformance.judges`."""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import AgentExited, AgentTimeout
from ..judges.run_walk import session_updates
from ..outcomes import (
    Outcome,
    failed,
    not_applicable,
    passed,
)
from ..requirements import check
from ..scenarios._expect import brief
from ..scenarios.catalog import CANCEL, TURNS
from ..scenarios.check_context import AgentRun, CheckContext, text_prompt
from ..scenarios.prompt_turns import (
    observe_cancel,
    stop_reason_of,
    too_short,
    wait_turn_running,
)
from ..scenarios.scripted_turns import allowed_write_with_a_tool_call
from .families import register_family
from .prompt_content import V1_CONTENT, judge_content_row

register_family(V1_CONTENT, TURNS, judge_content_row, module=__name__)


@check("prompt.concurrent-requests", scenario=CANCEL)
async def requests_are_answered_during_a_turn(ctx: CheckContext) -> Outcome:
    obs = await observe_cancel(ctx)
    if (na := too_short(obs)) is not None:
        return na
    if obs.concurrent is None:
        return failed(
            f"session/new during a running prompt was not answered: {obs.concurrent_error}"
        )
    return passed(
        "session/new answered while the prompt was running", frames=[obs.concurrent.frame.seq]
    )


@check("prompt.tool-call-permission-same-id", scenario=TURNS)
async def permission_names_the_announced_tool_call(ctx: CheckContext) -> Outcome:
    record = await allowed_write_with_a_tool_call(ctx)
    if isinstance(record, Outcome):
        return record
    requests = record.permission_requests()
    if not requests:
        return not_applicable("the agent asked no permission for the scripted write")
    for seq, params in requests:
        tool_call = params.get("toolCall") or {}
        announced = [u.get("toolCallId") for s, u in record.of_kind("tool_call") if s < seq]
        if tool_call.get("toolCallId") not in announced:
            return failed(
                f"permission request names toolCallId {tool_call.get('toolCallId')!r}, "
                f"announced were {announced}",
                frames=[seq],
            )
    return passed(
        "permission requests name announced tool calls", frames=[seq for seq, _ in requests]
    )


FIRST_TEXT = "First turn: the scripted model takes a moment to say this."


SECOND_TEXT = "Second turn: this text belongs to the second prompt only."


#: Seconds the scripted model holds the first turn's answer back.
FIRST_TURN_LATENCY = 1.0

#: The first turn's model answer is slow enough that the second prompt surely arrives while
#: it runs (it is sent only once the model call is seen); the second answer is immediate.
OVERLAP_SCRIPT: list[dict[str, Any]] = [
    {"content": [{"type": "text", "text": FIRST_TEXT}], "latency": FIRST_TURN_LATENCY},
    {"content": [{"type": "text", "text": SECOND_TEXT}]},
]


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
    for frame, session, update in session_updates(run.frames[start:end]):
        if session != session_id:
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
        # The model's deliberate pause is not the agent's slowness: the agent gets its whole
        # --timeout on top of it (with --timeout 1.5 a loaded machine missed the bare bound).
        first_response = await first.wait(ctx.timeout + FIRST_TURN_LATENCY)
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
        and stop_reason_of(second_response) != ("cancelled")
    ):
        return failed(
            f"the second prompt finished ({stop_reason_of(second_response)!r}) while the first "
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
        f"the second prompt was queued: it answered {stop_reason_of(second_response)!r} after the "
        f"first answered {stop_reason_of(first_response)!r}",
        frames=frames,
    )
