"""version.v2-* (prompts): protocol version 2's prompt content: each kind of block the v2 agent
advertises under ``capabilities.session.prompt`` (image, audio, embeddedContext) is accepted in
a prompt, and its turn ends idle without an error. Out of scope for a kind the agent does not
advertise."""

from __future__ import annotations

from typing import Any

from ..citations import v2_schema
from ..harness.agent_client import AgentExited, AgentTimeout
from ..outcomes import Outcome, failed, out_of_scope, passed
from ..requirements import Tier, requirement
from ..scenarios._expect import brief
from ..scenarios.check_context import CheckContext
from ..scenarios.prompt_turns import PNG_1PX, WAV_EMPTY
from ..scenarios.v2_agent import V2_SCENARIO, v2_session, v2_turn_run, wait_idle

# The v2 draft describes each capability as "present when ... accepted" with no MUST.
_REFERENCE = v2_schema(
    "PromptCapabilities", "image, audio and embeddedContext are stated without a MUST"
)


def _block(ctx: CheckContext, key: str) -> dict[str, Any]:
    if key == "image":
        return {"type": "image", "mimeType": "image/png", "data": PNG_1PX}
    if key == "audio":
        return {"type": "audio", "mimeType": "audio/wav", "data": WAV_EMPTY}
    resource = {
        "uri": (ctx.work / "notes.txt").as_uri(),
        "mimeType": "text/plain",
        "text": "remember the milk",
    }
    return {"type": "resource", "resource": resource}


def _advertised(init_result: Any, key: str) -> bool:
    caps = init_result.get("capabilities") if isinstance(init_result, dict) else None
    session = caps.get("session") if isinstance(caps, dict) else None
    prompt = session.get("prompt") if isinstance(session, dict) else None
    return isinstance(prompt, dict) and isinstance(prompt.get(key), dict)


async def _prompt_with(ctx: CheckContext, key: str) -> Outcome:
    run, skip = await v2_turn_run(ctx, None)
    if run is None:
        assert skip is not None
        return skip
    if not _advertised(run.init_result, key):
        return out_of_scope(f"the v2 agent does not advertise capabilities.session.prompt.{key}")
    session_id = await v2_session(ctx, run)
    if isinstance(session_id, Outcome):
        return session_id
    blocks = [{"type": "text", "text": "Describe the attached content."}, _block(ctx, key)]
    answer = await run.live.request(
        "session/prompt",
        {"sessionId": session_id, "prompt": blocks},
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


@requirement(
    "version.v2-prompt-image-accepted",
    Tier.SHOULD,
    "On a v2 connection that advertises capabilities.session.prompt.image, a prompt with "
    "an image block is accepted (a messageId) and its turn ends idle without an error.",
    _REFERENCE,
    scenario=V2_SCENARIO,
    llm=True,
)
async def v2_image_prompt_is_accepted(ctx: CheckContext) -> Outcome:
    return await _prompt_with(ctx, "image")


@requirement(
    "version.v2-prompt-audio-accepted",
    Tier.SHOULD,
    "On a v2 connection that advertises capabilities.session.prompt.audio, a prompt with "
    "an audio block is accepted (a messageId) and its turn ends idle without an error.",
    _REFERENCE,
    scenario=V2_SCENARIO,
    llm=True,
)
async def v2_audio_prompt_is_accepted(ctx: CheckContext) -> Outcome:
    return await _prompt_with(ctx, "audio")


@requirement(
    "version.v2-prompt-embedded-context-accepted",
    Tier.SHOULD,
    "On a v2 connection that advertises capabilities.session.prompt.embeddedContext, a prompt with "
    "an embedded resource is accepted (a messageId) and its turn ends idle without an error.",
    _REFERENCE,
    scenario=V2_SCENARIO,
    llm=True,
)
async def v2_embedded_resource_prompt_is_accepted(ctx: CheckContext) -> Outcome:
    return await _prompt_with(ctx, "embeddedContext")
