"""Chat-shaped views of Gemini and OpenAI Responses request bodies.

`Script` routes calls (main call or side call) and the echo responder answers from a body
in the chat shape the Anthropic and Chat Completions APIs share: ``messages`` with a
``role`` and string-or-blocks ``content``, and a ``tools`` list. The two other APIs carry
the same facts under other names; these functions translate them so that one script
drives all four APIs the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def gemini_view(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """A Gemini ``generateContent`` body (``contents`` of ``parts``) in the chat shape.

    A function response part becomes a ``tool_result`` block, so a user turn that only
    returns tool results is acknowledged as such by the echo responder.
    """
    messages = []
    for content in body.get("contents") or []:
        if not isinstance(content, Mapping):
            continue
        role = "assistant" if content.get("role") == "model" else "user"
        messages.append({"role": role, "content": _gemini_blocks(content.get("parts"))})
    tools = [
        declaration
        for tool in body.get("tools") or []
        if isinstance(tool, Mapping)
        for declaration in tool.get("functionDeclarations") or []
    ]
    return {"model": model, "messages": messages, "tools": tools}


def _gemini_blocks(parts: Any) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts or []:
        if not isinstance(part, Mapping) or part.get("thought"):
            continue
        if isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif isinstance(part.get("functionResponse"), Mapping):
            blocks.append({"type": "tool_result", "name": part["functionResponse"].get("name")})
        elif isinstance(part.get("functionCall"), Mapping):
            blocks.append({"type": "tool_use", "name": part["functionCall"].get("name")})
    return blocks


def gemini_wants_json(body: Mapping[str, Any]) -> bool:
    """Whether the call asks for a JSON answer (``responseMimeType: application/json``):
    agents use such calls for routing and next-speaker guesses, never for the turn itself."""
    config = body.get("generationConfig")
    if not isinstance(config, Mapping):
        return False
    return str(config.get("responseMimeType", "")).startswith("application/json")


def responses_view(body: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI Responses body (``input`` string or items, ``instructions``) in the chat
    shape; a ``function_call_output`` item becomes a ``tool`` message."""
    raw_input = body.get("input")
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    if isinstance(raw_input, str):
        messages.append({"role": "user", "content": raw_input})
    for item in raw_input if isinstance(raw_input, list) else []:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        if kind == "function_call_output":
            messages.append({"role": "tool", "content": str(item.get("output", ""))})
        elif kind == "function_call":
            messages.append({"role": "assistant", "content": [{"type": "tool_use"}]})
        elif kind == "message" and isinstance(item.get("role"), str):
            messages.append({"role": item["role"], "content": _responses_content(item)})
    return {
        "model": body.get("model"),
        "messages": messages,
        "tools": list(body.get("tools") or []),
    }


def _responses_content(item: Mapping[str, Any]) -> str | list[dict[str, Any]]:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return [
        {"type": "text", "text": part["text"]}
        for part in content or []
        if isinstance(part, Mapping) and isinstance(part.get("text"), str)
    ]


#: The Gemini methods that consume a scripted turn.
GEMINI_MODEL_METHODS = frozenset({"generateContent", "streamGenerateContent"})


def gemini_call(path: str) -> tuple[str, str] | None:
    """``(model, method)`` of a Gemini path such as ``/v1beta/models/M:generateContent``
    (any API version), or None for other paths."""
    parts = path.strip("/").split("/")
    if len(parts) != 3 or parts[1] != "models" or ":" not in parts[2]:
        return None
    model, _, method = parts[2].partition(":")
    return model, method
