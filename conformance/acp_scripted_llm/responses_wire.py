"""OpenAI Responses API shapes for a planned response (``POST /v1/responses``).

Each content block becomes one output item: text → a ``message`` item with one
``output_text`` part, thinking → a ``reasoning`` item with one summary text, a tool use → a
``function_call`` item whose ``call_id`` is the scripted tool id. A stream announces each
item (``output_item.added``), streams its text or arguments as deltas, closes it
(``output_item.done``) and ends with ``response.completed`` (``response.incomplete`` when
the scripted stop reason is ``max_tokens``). Every event carries a ``sequence_number``.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from typing import Any

from .planned import PlannedBlock, PlannedResponse

_ids = itertools.count(1)

# (event type, event data, is_delta)
StreamEvent = tuple[str, dict[str, Any], bool]


def _new_id(prefix: str) -> str:
    return f"{prefix}_scripted_{next(_ids):06d}"


def _usage(plan: PlannedResponse) -> dict[str, Any]:
    prompt, output = plan.usage["input_tokens"], plan.usage["output_tokens"]
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": plan.usage["cache_read_input_tokens"]},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + output,
    }


def _item(block: PlannedBlock, item_id: str, *, done: bool) -> dict[str, Any]:
    """The output item of one block, empty while it streams (``done=False``)."""
    status = "completed" if done else "in_progress"
    if block.type == "text":
        content = [_text_part(block.text)] if done else []
        return {
            "id": item_id,
            "type": "message",
            "status": status,
            "role": "assistant",
            "content": content,
        }
    if block.type == "thinking":
        summary = [{"type": "summary_text", "text": block.text}] if done else []
        return {"id": item_id, "type": "reasoning", "summary": summary}
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "call_id": block.tool_id,
        "name": block.tool_name,
        "arguments": json.dumps(block.tool_input) if done else "",
    }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


def _response(
    plan: PlannedResponse, response_id: str, created: int, output: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """The response object; ``output=None`` gives the in-progress skeleton."""
    finished = output is not None
    incomplete = finished and plan.stop_reason == "max_tokens"
    status = "incomplete" if incomplete else ("completed" if finished else "in_progress")
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": status,
        "model": plan.model,
        "output": output or [],
        "usage": _usage(plan) if finished else None,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "instructions": None,
        "metadata": {},
        "parallel_tool_calls": True,
        "temperature": None,
        "top_p": None,
        "tool_choice": "auto",
        "tools": [],
    }


def whole_response(plan: PlannedResponse) -> dict[str, Any]:
    """The response object returned for ``stream: false``."""
    output = [_item(b, _item_id(b), done=True) for b in plan.blocks]
    return _response(plan, _new_id("resp"), int(time.time()), output)


def _item_id(block: PlannedBlock) -> str:
    return _new_id({"text": "msg", "thinking": "rs", "tool_use": "fc"}[block.type])


def error_event(error_type: str, message: str) -> dict[str, Any]:
    """The data of a stream's ``error`` event (a failure after the stream began)."""
    return {"type": "error", "code": error_type, "message": message, "param": None}


def stream_events(plan: PlannedResponse) -> Iterator[StreamEvent]:
    """Yield the events of a streamed response, in wire order, numbered from 0."""
    for number, (kind, data, is_delta) in enumerate(_events(plan)):
        yield kind, {"type": kind, "sequence_number": number, **data}, is_delta


def _events(plan: PlannedResponse) -> Iterator[StreamEvent]:
    response_id, created = _new_id("resp"), int(time.time())
    skeleton = _response(plan, response_id, created, None)
    yield "response.created", {"response": skeleton}, False
    yield "response.in_progress", {"response": skeleton}, False
    output = []
    for index, block in enumerate(plan.blocks):
        item_id = _item_id(block)
        where = {"item_id": item_id, "output_index": index}
        yield (
            "response.output_item.added",
            {"output_index": index, "item": _item(block, item_id, done=False)},
            False,
        )
        yield from _block_events(block, where)
        item = _item(block, item_id, done=True)
        output.append(item)
        yield "response.output_item.done", {"output_index": index, "item": item}, False
    final = _response(plan, response_id, created, output)
    yield f"response.{final['status']}", {"response": final}, False


def _block_events(block: PlannedBlock, where: dict[str, Any]) -> Iterator[StreamEvent]:
    if block.type == "tool_use":
        for piece in block.pieces:
            yield "response.function_call_arguments.delta", {**where, "delta": piece}, True
        arguments = json.dumps(block.tool_input)
        yield "response.function_call_arguments.done", {**where, "arguments": arguments}, False
        return
    if block.type == "thinking":
        at = {**where, "summary_index": 0}
        empty = {"type": "summary_text", "text": ""}
        yield "response.reasoning_summary_part.added", {**at, "part": empty}, False
        for piece in block.pieces:
            yield "response.reasoning_summary_text.delta", {**at, "delta": piece}, True
        yield "response.reasoning_summary_text.done", {**at, "text": block.text}, False
        full = {"type": "summary_text", "text": block.text}
        yield "response.reasoning_summary_part.done", {**at, "part": full}, False
        return
    at = {**where, "content_index": 0}
    yield "response.content_part.added", {**at, "part": _text_part("")}, False
    for piece in block.pieces:
        yield "response.output_text.delta", {**at, "delta": piece, "logprobs": []}, True
    yield "response.output_text.done", {**at, "text": block.text, "logprobs": []}, False
    yield "response.content_part.done", {**at, "part": _text_part(block.text)}, False
