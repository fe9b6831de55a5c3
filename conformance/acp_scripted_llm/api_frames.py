"""What each API's answer looks like on the wire: a streamed answer as encoded SSE frames
(each with whether it carries a delta), a whole answer, and the model listing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from . import anthropic_wire, gemini_wire, openai_wire, responses_wire
from .planned import PlannedResponse
from .recorded_request import Api

AVAILABLE_MODELS = ("scripted-model", "claude-sonnet-4-6", "fake-model")


def stream_frames(
    api: Api, plan: PlannedResponse, body: dict[str, Any]
) -> Iterator[tuple[bytes, bool]]:
    """Encoded SSE frames with their is-delta flag, for any of the four APIs."""
    dumps = json.dumps
    if api == "gemini":
        yield from _gemini_frames(plan)
        return
    if api == "openai-responses":
        yield from _responses_frames(plan)
        return
    if api == "anthropic":
        for name, data, is_delta in anthropic_wire.stream_events(plan):
            yield b"event: %s\ndata: %s\n\n" % (name.encode(), dumps(data).encode()), is_delta
        return
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    stream_error = plan.stream_error
    limit = (stream_error or {}).get("after_events")
    for count, (chunk, is_delta) in enumerate(
        openai_wire.stream_chunks(plan, include_usage=include_usage)
    ):
        if stream_error is not None and (
            (limit is not None and count >= limit)
            or (limit is None and chunk["choices"] and chunk["choices"][0]["finish_reason"])
        ):
            error = openai_wire.error_body(
                stream_error.get("type", "server_error"), stream_error.get("message", "Overloaded")
            )
            yield b"data: %s\n\n" % dumps(error).encode(), False
            return
        yield b"data: %s\n\n" % dumps(chunk).encode(), is_delta
    yield b"data: [DONE]\n\n", False


def _gemini_frames(plan: PlannedResponse) -> Iterator[tuple[bytes, bool]]:
    """``data:`` lines of whole response chunks; a scripted stream error replaces the tail
    by one chunk holding an ``error`` object, as the API reports a failure mid-stream."""
    stream_error = plan.stream_error
    limit = (stream_error or {}).get("after_events")
    for count, (chunk, is_delta) in enumerate(gemini_wire.stream_chunks(plan)):
        finishing = "finishReason" in chunk["candidates"][0]
        if stream_error is not None and (
            (limit is not None and count >= limit) or (limit is None and finishing)
        ):
            error = gemini_wire.error_body(503, stream_error.get("message", "Overloaded"))
            yield b"data: %s\r\n\r\n" % json.dumps(error).encode(), False
            return
        yield b"data: %s\r\n\r\n" % json.dumps(chunk).encode(), is_delta


def _responses_frames(plan: PlannedResponse) -> Iterator[tuple[bytes, bool]]:
    """Named SSE events; a scripted stream error replaces the tail (from ``after_events``,
    or the final ``response.completed``) by one ``error`` event."""
    stream_error = plan.stream_error
    limit = (stream_error or {}).get("after_events")
    for count, (name, data, is_delta) in enumerate(responses_wire.stream_events(plan)):
        if stream_error is not None and (
            (limit is not None and count >= limit)
            or (limit is None and name in ("response.completed", "response.incomplete"))
        ):
            error = responses_wire.error_event(
                stream_error.get("type", "server_error"), stream_error.get("message", "Overloaded")
            )
            error["sequence_number"] = count
            yield b"event: error\ndata: %s\n\n" % json.dumps(error).encode(), False
            return
        yield b"event: %s\ndata: %s\n\n" % (name.encode(), json.dumps(data).encode()), is_delta


WHOLE_ANSWER: dict[str, Callable[[PlannedResponse], dict[str, Any]]] = {
    "anthropic": anthropic_wire.whole_message,
    "openai": openai_wire.whole_completion,
    "openai-responses": responses_wire.whole_response,
    "gemini": gemini_wire.whole_response,
}


def model_entry(model_id: str) -> dict[str, Any]:
    """One model in a shape both Anthropic and OpenAI clients accept."""
    return {
        "type": "model",
        "id": model_id,
        "display_name": model_id,
        "created_at": "2025-01-01T00:00:00Z",
        "object": "model",
        "created": 1735689600,
        "owned_by": "scripted",
    }


def models_listing() -> dict[str, Any]:
    data = [model_entry(m) for m in AVAILABLE_MODELS]
    return {
        "object": "list",
        "data": data,
        "has_more": False,
        "first_id": data[0]["id"],
        "last_id": data[-1]["id"],
    }
