"""The content blocks a prompt may carry, as one table over both protocol versions: text and
resource_link (every v1 agent), image, audio and an embedded resource (an agent that
advertises them; v1 under ``agentCapabilities.promptCapabilities``, v2 under
``capabilities.session.prompt``).

A row is one requirement; one body per version judges a prompt that carries the row's block:
on v1 the prompt's answer must be a valid stopReason, on v2 the prompt is accepted (a
messageId) and its turn ends idle without an error (:func:`judge_content_row`). :mod:`.prompt`
registers the v1 rows and :mod:`.v2_prompts` the v2 rows (each where its scenario's order
wants them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..harness.agent_client import AgentExited, AgentTimeout
from ..outcomes import Outcome, failed, not_applicable, out_of_scope, passed
from ..scenarios._expect import brief, exchange_frames
from ..scenarios.check_context import CheckContext, text_prompt
from ..scenarios.prompt_turns import (
    PNG_1PX,
    STOP_REASONS,
    UNREACHABLE_MODEL,
    WAV_EMPTY,
    stop_reason_of,
)
from ..scenarios.v2_agent import v2_session, v2_turn_run, wait_idle

AUTH_REQUIRED = -32000

#: Errors that reject the prompt's content itself (always judged, with or without a model).
CONTENT_REJECTED = (-32600, -32601, -32602)


@dataclass(frozen=True)
class ContentRow:
    """A row: a prompt carrying one kind of block, on one protocol version."""

    #: The id of the rule the row judges.
    rule: str
    #: text, resource_link, image, audio or embeddedContext (the capability's own name).
    kind: str
    #: How a message names the block ("an image").
    what: str
    version: int = 1


V1_CONTENT: tuple[ContentRow, ...] = (
    ContentRow(
        "prompt.text-accepted",
        "text",
        "text",
    ),
    ContentRow(
        "prompt.resource-link-accepted",
        "resource_link",
        "a resource_link",
    ),
    ContentRow(
        "prompt.image-accepted",
        "image",
        "an image",
    ),
    ContentRow(
        "prompt.audio-accepted",
        "audio",
        "audio",
    ),
    ContentRow(
        "prompt.embedded-context-accepted",
        "embeddedContext",
        "an embedded resource",
    ),
)


def _v2_row(kind: str, what: str, id_part: str) -> ContentRow:
    """A v2 row (its rule is a SHOULD: the v2 draft states these capabilities with no MUST)."""
    return ContentRow(f"version.v2-prompt-{id_part}-accepted", kind, what, version=2)


V2_CONTENT: tuple[ContentRow, ...] = (
    _v2_row("image", "an image", "image"),
    _v2_row("audio", "audio", "audio"),
    _v2_row("embeddedContext", "an embedded resource", "embedded-context"),
)


def content_blocks(ctx: CheckContext, kind: str) -> list[dict[str, Any]]:
    """The blocks a prompt carries after its text, for a row of ``kind``."""
    if kind == "text":
        return []
    if kind == "resource_link":
        target = ctx.work / "README.md"
        target.write_text("# conformance\n", encoding="utf-8")
        return [{"type": "resource_link", "uri": target.as_uri(), "name": "README.md"}]
    if kind == "image":
        return [{"type": "image", "mimeType": "image/png", "data": PNG_1PX}]
    if kind == "audio":
        return [{"type": "audio", "mimeType": "audio/wav", "data": WAV_EMPTY}]
    resource = {
        "uri": (ctx.work / "notes.txt").as_uri(),
        "mimeType": "text/plain",
        "text": "remember the milk",
    }
    return [{"type": "resource", "resource": resource}]


async def _judge_v1(ctx: CheckContext, row: ContentRow) -> Outcome:
    run = await ctx.turn_agent()
    session_id = await ctx.new_session(run)
    prompt = text_prompt(session_id, ctx.config.prompt_text or "Describe what I sent.")
    prompt["prompt"] += content_blocks(ctx, row.kind)
    try:
        response = await ctx.prompt_turn(run, prompt)
    except AgentTimeout as exc:
        if ctx.config.llm != "none":
            raise
        # Leave no turn running behind (it would count as a request never answered).
        await run.live.notify("session/cancel", {"sessionId": session_id})
        return not_applicable(f"{ctx.turn_hung(exc)}; {UNREACHABLE_MODEL}")
    frames = exchange_frames(response)
    what = row.what
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


def _v2_advertised(init_result: Any, kind: str) -> bool:
    caps = init_result.get("capabilities") if isinstance(init_result, dict) else None
    session = caps.get("session") if isinstance(caps, dict) else None
    prompt = session.get("prompt") if isinstance(session, dict) else None
    return isinstance(prompt, dict) and isinstance(prompt.get(kind), dict)


async def _judge_v2(ctx: CheckContext, row: ContentRow) -> Outcome:
    run = await v2_turn_run(ctx, None)
    if isinstance(run, Outcome):
        return run
    if not _v2_advertised(run.init_result, row.kind):
        return out_of_scope(
            f"the v2 agent does not advertise capabilities.session.prompt.{row.kind}"
        )
    session_id = await v2_session(ctx, run)
    if isinstance(session_id, Outcome):
        return session_id
    blocks = [{"type": "text", "text": "Describe the attached content."}]
    answer = await run.live.request(
        "session/prompt",
        {"sessionId": session_id, "prompt": blocks + content_blocks(ctx, row.kind)},
        timeout=max(ctx.timeout, 30),
    )
    if answer.is_error or not isinstance(answer.result, dict):
        return failed(f"the prompt was refused: {brief(answer.frame)}", frames=[answer.frame.seq])
    try:
        idle = await wait_idle(ctx, run, session_id, answer.frame.seq)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"no state_update idle after the prompt: {exc}", frames=[answer.frame.seq])
    frames = [answer.frame.seq, idle.seq]
    update = idle.message["params"]["update"]
    if update.get("error") is not None or update.get("stopReason") in (None, "refusal"):
        return failed(f"the turn ended {brief(idle, 200)}", frames=frames)
    return passed(f"accepted; the turn idled {update.get('stopReason')}", frames=frames)


async def judge_content_row(ctx: CheckContext, row: ContentRow) -> Outcome:
    """The one check body of the table (a prompt's answer on v1, its idle on v2)."""
    if row.version == 1:
        return await _judge_v1(ctx, row)
    return await _judge_v2(ctx, row)
