"""Gemini API shapes for a planned response (``generateContent`` and its SSE stream).

A streamed answer is a series of whole ``GenerateContentResponse`` objects, one per
``data:`` line: text pieces arrive one part per chunk; a thought summary and a function
call arrive whole (Gemini streams neither in pieces, and gemini-cli reads each thought part
as one ``**subject** description`` summary); the last chunk carries the finish reason and
the token counts.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from .planned import PlannedBlock, PlannedResponse

FINISH_REASONS = {
    "end_turn": "STOP",
    "stop_sequence": "STOP",
    "tool_use": "STOP",
    "max_tokens": "MAX_TOKENS",
    "refusal": "SAFETY",
}

#: The canonical status names Google APIs put next to an HTTP status in error bodies.
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

_response_ids = itertools.count(1)

# (response chunk, is_delta)
Chunk = tuple[dict[str, Any], bool]


def error_body(status: int, message: str) -> dict[str, Any]:
    return {
        "error": {"code": status, "message": message, "status": STATUS_NAMES.get(status, "UNKNOWN")}
    }


def _usage(plan: PlannedResponse) -> dict[str, Any]:
    prompt, output = plan.usage["input_tokens"], plan.usage["output_tokens"]
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output,
    }
    if plan.usage["cache_read_input_tokens"]:
        usage["cachedContentTokenCount"] = plan.usage["cache_read_input_tokens"]
    return usage


def _whole_part(block: PlannedBlock) -> dict[str, Any]:
    if block.type == "text":
        return {"text": block.text}
    if block.type == "thinking":
        return {"text": block.text, "thought": True}
    return {
        "functionCall": {"id": block.tool_id, "name": block.tool_name, "args": block.tool_input}
    }


def _response(
    plan: PlannedResponse, response_id: str, parts: list[dict[str, Any]], *, last: bool
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    response: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": plan.model,
        "responseId": response_id,
    }
    if last:
        candidate["finishReason"] = FINISH_REASONS[plan.stop_reason]
        response["usageMetadata"] = _usage(plan)
    return response


def stream_chunks(plan: PlannedResponse) -> Iterator[Chunk]:
    """Yield the ``GenerateContentResponse`` chunks of a streamed answer.

    The last content chunk also carries the finish reason and usage, as the real API does
    (clients treat a finished chunk without parts as an empty answer); an answer without
    content is one chunk holding an empty text part.
    """
    response_id = f"scripted-{next(_response_ids):06d}"
    parts: list[dict[str, Any]] = []
    for block in plan.blocks:
        if block.type == "text":
            parts.extend({"text": piece} for piece in block.pieces)
        else:
            parts.append(_whole_part(block))
    if not parts:
        parts.append({"text": ""})
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        yield _response(plan, response_id, [part], last=last), True


def whole_response(plan: PlannedResponse) -> dict[str, Any]:
    """The ``GenerateContentResponse`` returned by ``generateContent``."""
    response_id = f"scripted-{next(_response_ids):06d}"
    return _response(plan, response_id, [_whole_part(b) for b in plan.blocks], last=True)
