"""prompt.*: the prompt turn — content blocks the agent accepts, requests answered during a
turn, one turn at a time per session, permission questions naming the announced tool call.

The prompt rules judged over every recorded turn (updates before the response, updates
naming a known and the prompted session) are run-wide judges in :mod:`acp_conformance.judges`."""

from __future__ import annotations

from typing import Any

from ..citations import acp, house
from ..harness.agent_client import AgentExited, AgentTimeout
from ..judges.run_walk import session_updates
from ..outcomes import (
    Outcome,
    failed,
    not_applicable,
    passed,
)
from ..requirements import Tier, requirement
from ..scenarios._expect import brief
from ..scenarios.catalog import CANCEL, TURNS
from ..scenarios.check_context import AgentRun, CheckContext, text_prompt
from ..scenarios.prompt_turns import (
    PNG_1PX,
    STOP_REASONS,
    UNREACHABLE_MODEL,
    WAV_EMPTY,
    observe_cancel,
    stop_reason_of,
    too_short,
    wait_turn_running,
)
from ..scenarios.scripted_turns import allowed_write, no_tool_call, turn_failed

AUTH_REQUIRED = -32000


#: Errors that reject the prompt's content itself (always judged, with or without a model).
CONTENT_REJECTED = (-32600, -32601, -32602)


async def _prompt_with(ctx: CheckContext, blocks: list[dict[str, Any]], what: str) -> Outcome:
    run = await ctx.turn_agent()
    session_id = await ctx.new_session(run)
    prompt = text_prompt(session_id, ctx.config.prompt_text or "Describe what I sent.")
    prompt["prompt"] += blocks
    try:
        response = await ctx.prompt_turn(run, prompt)
    except AgentTimeout as exc:
        if ctx.config.llm != "none":
            raise
        # Leave no turn running behind (it would count as a request never answered).
        await run.live.notify("session/cancel", {"sessionId": session_id})
        return not_applicable(f"{ctx.turn_hung(exc)}; {UNREACHABLE_MODEL}")
    frames = [response.request.seq, response.frame.seq]
    if response.is_error:
        if response.error_code == AUTH_REQUIRED:
            return not_applicable(
                f"the agent needs authentication to run prompts ({what} not exercised)"
            )
        if ctx.config.llm == "none" and response.error_code not in CONTENT_REJECTED:
            return not_applicable(
                f"a prompt with {what} answered error {response.error_code}; {UNREACHABLE_MODEL}"
            )
        return failed(f"a prompt with {what} failed: {brief(response.frame)}", frames=frames)
    if stop_reason_of(response) not in STOP_REASONS:
        return failed(
            f"stopReason {stop_reason_of(response)!r} is not a valid stop reason", frames=frames
        )
    return passed(f"a prompt with {what} ended with {stop_reason_of(response)!r}", frames=frames)


@requirement(
    "prompt.text-accepted",
    Tier.MUST,
    "A text prompt gets a valid stopReason (or -32000 when no credentials are configured).",
    acp("prompt-turn", "Stop reasons")
    + "; "
    + acp(
        "initialization",
        "Prompt capabilities",
        "Agents MUST support ContentBlock::Text and ContentBlock::ResourceLink",
    ),
    scenario=TURNS,
)
async def text_prompt_is_answered(ctx: CheckContext) -> Outcome:
    return await _prompt_with(ctx, [], "text")


@requirement(
    "prompt.resource-link-accepted",
    Tier.MUST,
    "A prompt with a resource_link block (baseline content) is not rejected as invalid.",
    acp(
        "initialization",
        "Prompt capabilities",
        "Agents MUST support ContentBlock::Text and ContentBlock::ResourceLink",
    ),
    scenario=TURNS,
)
async def resource_link_is_accepted(ctx: CheckContext) -> Outcome:
    target = ctx.work / "README.md"
    target.write_text("# conformance\n", encoding="utf-8")
    link = {"type": "resource_link", "uri": target.as_uri(), "name": "README.md"}
    return await _prompt_with(ctx, [link], "a resource_link")


@requirement(
    "prompt.image-accepted",
    Tier.CAPABILITY,
    "A prompt with an image block is accepted when promptCapabilities.image is advertised.",
    house(
        "advertised prompt content is accepted (ACP: agents MAY support it)",
        acp("content", "Image content"),
    ),
    scenario=TURNS,
    gate="agentCapabilities.promptCapabilities.image",
    house=True,
)
async def image_is_accepted(ctx: CheckContext) -> Outcome:
    return await _prompt_with(
        ctx, [{"type": "image", "mimeType": "image/png", "data": PNG_1PX}], "an image"
    )


@requirement(
    "prompt.audio-accepted",
    Tier.CAPABILITY,
    "A prompt with an audio block is accepted when promptCapabilities.audio is advertised.",
    house(
        "advertised prompt content is accepted (ACP: agents MAY support it)",
        acp("content", "Audio content"),
    ),
    scenario=TURNS,
    gate="agentCapabilities.promptCapabilities.audio",
    house=True,
)
async def audio_is_accepted(ctx: CheckContext) -> Outcome:
    return await _prompt_with(
        ctx, [{"type": "audio", "mimeType": "audio/wav", "data": WAV_EMPTY}], "audio"
    )


@requirement(
    "prompt.embedded-context-accepted",
    Tier.CAPABILITY,
    "A prompt with an embedded resource is accepted when embeddedContext is advertised.",
    house(
        "advertised prompt content is accepted (ACP: agents MAY support it)",
        acp("content", "Embedded resource"),
    ),
    scenario=TURNS,
    gate="agentCapabilities.promptCapabilities.embeddedContext",
    house=True,
)
async def embedded_resource_is_accepted(ctx: CheckContext) -> Outcome:
    resource = {
        "uri": (ctx.work / "notes.txt").as_uri(),
        "mimeType": "text/plain",
        "text": "remember the milk",
    }
    return await _prompt_with(
        ctx, [{"type": "resource", "resource": resource}], "an embedded resource"
    )


@requirement(
    "prompt.concurrent-requests",
    Tier.SHOULD,
    "Requests sent while a prompt runs are answered without waiting for the turn to end.",
    house(
        "requests are answered during a turn",
        acp(
            "session-modes",
            "Setting the current mode",
            "whether the Agent is idle or generating a response",
        ),
    ),
    scenario=CANCEL,
    house=True,
)
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


@requirement(
    "prompt.tool-call-permission-same-id",
    Tier.MUST,
    "A permission request names the toolCallId of a tool_call announced earlier in the turn.",
    house(
        "a permission request names an announced tool call",
        acp("tool-calls", "Requesting permission"),
    ),
    scenario=TURNS,
    llm=True,
    house=True,
)
async def permission_names_the_announced_tool_call(ctx: CheckContext) -> Outcome:
    record = await allowed_write(ctx)
    if isinstance(record, Outcome):
        return record
    if (bad := turn_failed(record) or no_tool_call(record)) is not None:
        return bad
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


@requirement(
    "prompt.one-turn-at-a-time",
    Tier.SHOULD,
    "A second session/prompt while the session's turn runs is rejected or queued; the two turns "
    "never interleave.",
    house("one turn per session at a time", acp("prompt-turn", "Prompt turn")),
    scenario=CANCEL,
    llm=True,
    house=True,
)
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
