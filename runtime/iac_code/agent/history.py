"""A session's conversation as persisted events, and the two views built from it.

Events are plain dicts appended to the session log (see :mod:`iac_code.store`):

``user_message``       ``{messageId, content: [ACP content blocks]}``
``assistant_message``  ``{messageId, blocks: [Anthropic text/thinking/tool_use], stopReason,
                       interrupted}``
``tool_call``          ``{toolCallId, title, kind, rawInput, locations}`` — a tool_use announced
``tool_result``        ``{toolCallId, status, modelContent, isError, content, rawOutput}``
``plan``               ``{entries}``
``mode`` / ``config``  ``{modeId}`` / ``{configId, value}``
``permission_rule``    ``{tool, choice}`` (``allow_always`` or ``reject_always``); ``tool`` is the
                       tool name, for MCP tools ``mcp:<server identity>:<tool>``
``compaction``         ``{summary, keptFrom}`` — model view starts at event ``keptFrom``
``partial_reply``      ``{messageId, kind, text}`` — one streamed delta, written before it is
                       relayed (see :mod:`iac_code.agent.partial_replies`)

Views: :func:`model_messages` (what the LLM sees) and :func:`replay_updates` (what
``session/load`` streams back). Both are tolerant of histories cut short by a crash or a
cancel: every ``tool_use`` gets a ``tool_result`` (SPEC §4.3), wherever it is in the history,
and :func:`missing_tool_results` tells the caller which results to persist as repairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from iac_code.agent.commands import expand_command
from iac_code.agent.content import to_model_blocks
from iac_code.agent.partial_replies import REPLAY_KIND, is_partial, unfinished_replies

INTERRUPTED_RESULT = (
    "interrupted: the tool did not finish (the turn was cancelled or the agent stopped)"
)
_INTERRUPTED_REPLY = "(no reply: the turn was interrupted)"
_CUT_SHORT_REPLY = "(interrupted: the agent stopped while replying)"


def interrupted_result_event(tool_call_id: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "toolCallId": tool_call_id,
        "status": "failed",
        "modelContent": INTERRUPTED_RESULT,
        "isError": True,
        "content": [{"type": "content", "content": {"type": "text", "text": INTERRUPTED_RESULT}}],
        "rawOutput": {"interrupted": True},
    }


def _tool_use_ids(event: dict[str, Any]) -> list[str]:
    return [b["id"] for b in event.get("blocks", ()) if b.get("type") == "tool_use"]


def missing_tool_results(events: Iterable[dict[str, Any]]) -> list[str]:
    """Ids of tool calls (anywhere in the history) that have no tool_result event.

    A tool call is a tool_use block of an assistant message, or a call announced by a
    ``tool_call`` event: a sub-agent's nested calls exist only as the latter, and a crash can
    leave them open just as well.
    """
    wanted: dict[str, None] = {}  # insertion-ordered set
    answered: set[str] = set()
    for event in events:
        kind = event.get("type")
        if kind == "assistant_message":
            wanted.update(dict.fromkeys(_tool_use_ids(event)))
        elif kind == "tool_call":
            wanted[event["toolCallId"]] = None
        elif kind == "tool_result":
            answered.add(event["toolCallId"])
    return [tool_id for tool_id in wanted if tool_id not in answered]


def _assistant_content(event: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in event.get("blocks", ()):
        kind = block.get("type")
        if kind == "thinking":
            # A thinking block without its signature cannot be sent back to the API.
            if block.get("signature"):
                blocks.append(block)
        elif kind == "text":
            if block.get("text"):
                blocks.append({"type": "text", "text": block["text"]})
        elif kind == "tool_use":
            blocks.append(block)
    if event.get("interrupted"):
        blocks.append({"type": "text", "text": "(interrupted by the user)"})
    return blocks or [{"type": "text", "text": _INTERRUPTED_REPLY}]


def model_messages(events: list[dict[str, Any]], *, images: bool) -> list[dict[str, Any]]:
    """The Anthropic ``messages`` list for the next model call.

    Roles strictly alternate, every tool_use is followed by its tool_result in the next user
    message (synthesised as an "interrupted" error when missing), and a cancelled turn's user
    message is never merged with the next prompt.
    """
    start = 0
    summary: str | None = None
    for event in events:
        if event.get("type") == "compaction":
            start, summary = int(event["keptFrom"]), str(event["summary"])
    results = {e["toolCallId"]: e for e in events if e.get("type") == "tool_result"}
    unfinished = unfinished_replies(events[start:])
    messages: list[dict[str, Any]] = []
    if summary is not None:
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"Summary of the earlier conversation:\n{summary}"}
                ],
            }
        )
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Understood."}]})

    def push(role: str, content: list[dict[str, Any]]) -> None:
        if messages and messages[-1]["role"] == role:
            filler = _INTERRUPTED_REPLY if role == "user" else "(continue)"
            messages.append(
                {
                    "role": "assistant" if role == "user" else "user",
                    "content": [{"type": "text", "text": filler}],
                }
            )
        messages.append({"role": role, "content": content})

    for event in events[start:]:
        kind = event.get("type")
        if kind == "user_message":
            push("user", _user_content(event["content"], images=images))
        elif kind == "assistant_message":
            push("assistant", _assistant_content(event))
            tool_ids = _tool_use_ids(event)
            if tool_ids:
                push(
                    "user",
                    [_tool_result_block(tool_id, results.get(tool_id)) for tool_id in tool_ids],
                )
        elif is_partial(event) and event["messageId"] in unfinished:
            # A reply cut short by a dead process: the model gets the text the user saw, as
            # an interrupted assistant message (unsigned thinking cannot go back to the API).
            runs = unfinished.pop(event["messageId"])
            text = "".join(text for delta_kind, text in runs if delta_kind == "text")
            content = [{"type": "text", "text": text}] if text else []
            push("assistant", [*content, {"type": "text", "text": _CUT_SHORT_REPLY}])
    return messages


def _user_content(prompt: list[dict[str, Any]], *, images: bool) -> list[dict[str, Any]]:
    """The prompt as the model sees it; a leading slash command becomes its instructions.

    Expanded here (not when persisted) so that replay shows what the user typed while every
    model request, in every later turn, sees the same expanded text.
    """
    blocks = to_model_blocks(prompt, images=images)
    if blocks and blocks[0].get("type") == "text":
        blocks[0] = {**blocks[0], "text": expand_command(blocks[0]["text"])}
    return blocks


def _tool_result_block(tool_id: str, result: dict[str, Any] | None) -> dict[str, Any]:
    if result is None:
        return {
            "type": "tool_result",
            "tool_use_id": tool_id,
            "content": INTERRUPTED_RESULT,
            "is_error": True,
        }
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": tool_id,
        "content": result.get("modelContent") or "",
    }
    if result.get("isError"):
        block["is_error"] = True
    return block


def _final_update(result: dict[str, Any]) -> dict[str, Any]:
    final: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": result["toolCallId"],
        "status": result.get("status", "completed"),
    }
    if result.get("content"):
        final["content"] = result["content"]
    if "rawOutput" in result:
        final["rawOutput"] = result["rawOutput"]
    if result.get("stoppedByClient"):
        # Stopped with v2 tool_call/cancel: v2 replays it as ``cancelled`` (see tool_runner).
        final["_meta"] = {"iac_code": {"stoppedByClient": True}}
    return final


def replay_updates(events: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """``session/update`` payloads (the ``update`` object) that rebuild the conversation.

    Each tool call is replayed as its announcement followed at once by its final state, also
    when the result event sits elsewhere in the log (a crash repair appended at the end).
    """
    results = {e["toolCallId"]: e for e in events if e.get("type") == "tool_result"}
    unfinished = unfinished_replies(events)
    tool_names: dict[str, str] = {}
    replayed: set[str] = set()
    for event in events:
        kind = event.get("type")
        if kind == "user_message":
            for block in event["content"]:
                yield {
                    "sessionUpdate": "user_message_chunk",
                    "content": block,
                    "messageId": event["messageId"],
                }
        elif kind == "assistant_message":
            for block in event.get("blocks", ()):
                btype = block.get("type")
                if btype == "tool_use":
                    tool_names[block["id"]] = block.get("name", "tool")
                elif btype == "text" and block.get("text"):
                    yield {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": block["text"]},
                        "messageId": event["messageId"],
                    }
                elif btype == "thinking" and block.get("thinking"):
                    yield {
                        "sessionUpdate": "agent_thought_chunk",
                        "content": {"type": "text", "text": block["thinking"]},
                        "messageId": event["messageId"],
                    }
        elif kind == "tool_call":
            tool_id = event["toolCallId"]
            replayed.add(tool_id)
            update: dict[str, Any] = {
                "sessionUpdate": "tool_call",
                "toolCallId": tool_id,
                "title": event["title"],
                "kind": event.get("kind", "other"),
                "status": "pending",
                "rawInput": event.get("rawInput", {}),
            }
            if event.get("name"):
                update["name"] = event["name"]  # sessions stored before 1.22 have none
            if event.get("locations"):
                update["locations"] = event["locations"]
            if event.get("_meta"):
                update["_meta"] = event["_meta"]  # e.g. the parent of a sub-agent's call
            yield update
            if tool_id in results:
                yield _final_update(results[tool_id])
        elif kind == "tool_result" and event["toolCallId"] not in replayed:
            # Crash repairs can answer a tool_use that was never announced; announce it
            # so the client never sees an update for an unknown tool call.
            replayed.add(event["toolCallId"])
            yield {
                "sessionUpdate": "tool_call",
                "toolCallId": event["toolCallId"],
                "title": tool_names.get(event["toolCallId"], "tool"),
                "kind": "other",
                "status": "pending",
            }
            yield _final_update(event)
        elif kind == "plan":
            yield {"sessionUpdate": "plan", "entries": event["entries"]}
        elif is_partial(event) and event["messageId"] in unfinished:
            # Only replies with no stored end are rebuilt, once, where they began.
            message_id = event["messageId"]
            for delta_kind, text in unfinished.pop(message_id):
                yield {
                    "sessionUpdate": REPLAY_KIND[delta_kind],
                    "content": {"type": "text", "text": text},
                    "messageId": message_id,
                }
