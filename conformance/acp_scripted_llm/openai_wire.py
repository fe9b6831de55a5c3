"""OpenAI Chat Completions shapes for a planned response (streamed chunks and whole answer).

Thinking blocks are sent as ``delta.reasoning_content`` (the field several
OpenAI-compatible servers use); clients that do not know it ignore it.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from typing import Any

from .planned import PlannedResponse

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

_completion_ids = itertools.count(1)

# (chunk, is_delta); the chunk is JSON data for one ``data:`` line.
Chunk = tuple[dict[str, Any], bool]


def error_body(error_type: str, message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def _usage(plan: PlannedResponse) -> dict[str, Any]:
    prompt, completion = plan.usage["input_tokens"], plan.usage["output_tokens"]
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": plan.usage["cache_read_input_tokens"]},
    }


def stream_chunks(plan: PlannedResponse, *, include_usage: bool) -> Iterator[Chunk]:
    """Yield the ``chat.completion.chunk`` objects of a streamed answer (before ``[DONE]``)."""
    completion_id = f"chatcmpl-scripted-{next(_completion_ids):06d}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": plan.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    yield chunk({"role": "assistant", "content": ""}), False
    tool_index = 0
    for block in plan.blocks:
        if block.type == "text":
            for piece in block.pieces:
                yield chunk({"content": piece}), True
        elif block.type == "thinking":
            for piece in block.pieces:
                yield chunk({"reasoning_content": piece}), True
        else:
            yield (
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": tool_index,
                                "id": block.tool_id,
                                "type": "function",
                                "function": {"name": block.tool_name, "arguments": ""},
                            }
                        ]
                    }
                ),
                False,
            )
            for piece in block.pieces:
                yield (
                    chunk(
                        {"tool_calls": [{"index": tool_index, "function": {"arguments": piece}}]}
                    ),
                    True,
                )
            tool_index += 1
    yield chunk({}, FINISH_REASONS[plan.stop_reason]), False
    if include_usage:
        final = chunk({})
        final["choices"] = []
        final["usage"] = _usage(plan)
        yield final, False


def whole_completion(plan: PlannedResponse) -> dict[str, Any]:
    """The ``chat.completion`` object returned for ``stream: false``."""
    texts = [b.text for b in plan.blocks if b.type == "text"]
    reasoning = [b.text for b in plan.blocks if b.type == "thinking"]
    tool_calls = [
        {
            "id": b.tool_id,
            "type": "function",
            "function": {"name": b.tool_name, "arguments": json.dumps(b.tool_input)},
        }
        for b in plan.blocks
        if b.type == "tool_use"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": f"chatcmpl-scripted-{next(_completion_ids):06d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": plan.model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": FINISH_REASONS[plan.stop_reason]}
        ],
        "usage": _usage(plan),
    }
