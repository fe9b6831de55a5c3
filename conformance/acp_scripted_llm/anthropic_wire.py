"""Anthropic Messages API shapes for a planned response (streamed events and whole message).

Pure functions over `PlannedResponse`: no I/O, so the HTTP server and the runtime's
in-memory fake produce byte-for-byte the same event sequence.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from .planned import PlannedBlock, PlannedResponse

_message_ids = itertools.count(1)

# (event name, event data, is_delta): deltas are where the scripted chunk delay applies.
StreamEvent = tuple[str, dict[str, Any], bool]


def new_message_id() -> str:
    return f"msg_scripted_{next(_message_ids):06d}"


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """The Anthropic error envelope, used for HTTP errors and SSE ``error`` events."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def stream_events(plan: PlannedResponse, message_id: str | None = None) -> Iterator[StreamEvent]:
    """Yield the SSE events of a streamed Messages response, in wire order.

    A scripted ``stream_error`` replaces the tail of the stream (from its ``after_events``
    position, or after the content) by one ``error`` event.
    """
    events = _normal_events(plan, message_id or new_message_id())
    stream_error = plan.stream_error
    if stream_error is None:
        yield from events
        return
    limit = stream_error.get("after_events")
    for count, event in enumerate(events):
        if limit is not None and count >= limit:
            break
        if limit is None and event[0] == "message_delta":
            break
        yield event
    error = error_body(
        stream_error.get("type", "overloaded_error"), stream_error.get("message", "Overloaded")
    )
    yield "error", error, False


def _normal_events(plan: PlannedResponse, message_id: str) -> Iterator[StreamEvent]:
    usage = plan.usage
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": plan.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage["input_tokens"],
                    "output_tokens": 1,
                    "cache_read_input_tokens": usage["cache_read_input_tokens"],
                    "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                },
            },
        },
        False,
    )
    if plan.ping:
        yield "ping", {"type": "ping"}, False
    for index, block in enumerate(plan.blocks):
        yield from _block_events(index, block)
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": plan.stop_reason, "stop_sequence": plan.stop_sequence},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
        False,
    )
    yield "message_stop", {"type": "message_stop"}, False


def _block_events(index: int, block: PlannedBlock) -> Iterator[StreamEvent]:
    if block.type == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        delta_type, delta_key = "text_delta", "text"
    elif block.type == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        delta_type, delta_key = "thinking_delta", "thinking"
    else:
        start = {"type": "tool_use", "id": block.tool_id, "name": block.tool_name, "input": {}}
        delta_type, delta_key = "input_json_delta", "partial_json"
    yield (
        "content_block_start",
        {
            "type": "content_block_start",
            "index": index,
            "content_block": start,
        },
        False,
    )
    for piece in block.pieces:
        yield (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": delta_type, delta_key: piece},
            },
            True,
        )
    if block.type == "thinking":
        yield (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "signature_delta", "signature": block.signature},
            },
            True,
        )
    yield "content_block_stop", {"type": "content_block_stop", "index": index}, False


def whole_message(plan: PlannedResponse, message_id: str | None = None) -> dict[str, Any]:
    """The complete message returned for ``stream: false``."""
    return {
        "id": message_id or new_message_id(),
        "type": "message",
        "role": "assistant",
        "model": plan.model,
        "content": [block.final_block() for block in plan.blocks],
        "stop_reason": plan.stop_reason,
        "stop_sequence": plan.stop_sequence,
        "usage": dict(plan.usage),
    }
