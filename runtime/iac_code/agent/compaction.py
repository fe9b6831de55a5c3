"""Context compaction: summarise older turns when the context nears the model's window.

Before a model request, if the previous request of the session used more than
``COMPACT_AT`` of the context window, everything before the last ``KEEP_RECENT_PROMPTS``
user prompts is summarised by the model. A ``compaction`` event records the summary and where
the verbatim tail starts (``keptFrom``); :func:`iac_code.agent.history.model_messages` then
sends the summary in place of the older events. Nothing is deleted: ``session/load`` still
replays the whole conversation. The client sees a short notice, and ``compaction_update``
progress when it advertised ``session.compaction``.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from iac_code.agent.history import model_messages
from iac_code.llm.contract import ModelError, ModelRequest, Usage

if TYPE_CHECKING:
    from iac_code.agent.port import AgentPort
    from iac_code.agent.session import Session
    from iac_code.llm.contract import ModelClient

log = logging.getLogger(__name__)

COMPACT_AT = 0.85
KEEP_RECENT_PROMPTS = 2
SUMMARY_MAX_TOKENS = 4_096
_INSTRUCTIONS = (
    "Summarise the conversation above so that the work can continue without it. Keep: the"
    " user's goals and constraints, decisions taken, files read or changed (with paths),"
    " commands run and their outcome, errors still open, and the next steps. Be factual and"
    " compact; use bullet points."
)


def needs_compaction(context_tokens: int, window: int) -> bool:
    return window > 0 and context_tokens >= COMPACT_AT * window


def kept_from(events: list[dict[str, Any]], keep_prompts: int = KEEP_RECENT_PROMPTS) -> int | None:
    """Index of the first event kept verbatim, or None when there is nothing to summarise."""
    previous = max((int(e["keptFrom"]) for e in events if e.get("type") == "compaction"), default=0)
    prompts = [i for i, e in enumerate(events) if e.get("type") == "user_message"]
    if len(prompts) <= keep_prompts:
        return None
    boundary = prompts[-keep_prompts] if keep_prompts > 0 else len(events)
    return boundary if boundary > previous else None


def _summary_request(model: str, older: list[dict[str, Any]]) -> ModelRequest:
    messages = model_messages(older, images=False)
    if messages and messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "(continue)"}]})
    messages.append({"role": "user", "content": [{"type": "text", "text": _INSTRUCTIONS}]})
    return ModelRequest(
        model=model,
        system="You write faithful, compact summaries of coding sessions.",
        messages=messages,
        max_tokens=SUMMARY_MAX_TOKENS,
    )


async def maybe_compact(port: AgentPort, session: Session, client: ModelClient) -> Usage:
    """Compact the session's history if the last request came close to the window.

    Returns the tokens the summary request used (zero when nothing was compacted), for the
    turn's usage.
    """
    if not needs_compaction(session.last_context_tokens, port.settings.context_window):
        return Usage()
    boundary = kept_from(session.events)
    if boundary is None:
        return Usage()
    compaction_id = uuid.uuid4().hex
    session_caps = port.client_capabilities().get("session") or {}
    wants_progress = session_caps.get("compaction") is not None

    async def progress(status: str, **details: Any) -> None:
        """``compaction_update``, only for clients that advertised ``session.compaction``."""
        if wants_progress:
            await port.notify(
                session.session_id,
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": compaction_id,
                    "status": status,
                    **details,
                },
            )

    await progress("in_progress")
    try:
        response = await port.model.complete(
            client, _summary_request(session.config.model, session.events[:boundary])
        )
    except ModelError as exc:
        log.warning("compaction failed, continuing with the full history: %s", exc)
        await progress("failed", error=str(exc))
        return Usage()
    summary = response.text.strip() or "(no summary)"
    port.persist(
        session,
        {
            "type": "compaction",
            "compactionId": compaction_id,
            "summary": summary,
            "keptFrom": boundary,
        },
    )
    session.last_context_tokens = 0
    await port.notify(
        session.session_id,
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {
                "type": "text",
                "text": "[The conversation was getting long: earlier messages were summarised"
                " to free context.]\n\n",
            },
            "messageId": compaction_id,
        },
    )
    await progress("completed", summary=[{"type": "text", "text": summary}])
    return response.usage
