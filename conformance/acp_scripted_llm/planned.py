"""A scripted turn resolved against one request (:func:`plan_response`): the blocks cut into
streamed pieces, the stop reason, usage and the failure to stage, so the wire renderers of
each API only encode."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .script import DEFAULT_CHUNK_SIZE, ERROR_TYPES_BY_STATUS, STOP_REASONS, TurnData

_tool_ids = itertools.count(1)


# --------------------------------------------------------------------------------------
# Normalised form: what the renderers consume.


@dataclass(frozen=True, slots=True)
class PlannedBlock:
    """One content block with its streamed pieces already cut."""

    type: Literal["text", "thinking", "tool_use"]
    pieces: list[str]
    text: str = ""
    signature: str = ""
    tool_id: str = ""
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)

    def final_block(self) -> dict[str, Any]:
        """The block as it appears in a complete (non-streamed) Anthropic message."""
        if self.type == "text":
            return {"type": "text", "text": self.text}
        if self.type == "thinking":
            return {"type": "thinking", "thinking": self.text, "signature": self.signature}
        return {
            "type": "tool_use",
            "id": self.tool_id,
            "name": self.tool_name,
            "input": self.tool_input,
        }


@dataclass(frozen=True, slots=True)
class PlannedResponse:
    """A turn resolved against one request: every choice the renderers need is made."""

    model: str
    blocks: list[PlannedBlock]
    stop_reason: str
    stop_sequence: str | None
    usage: dict[str, int]
    latency: float = 0.0
    chunk_delay: float = 0.0
    ping: bool = True
    error: dict[str, Any] | None = None
    stream_error: dict[str, Any] | None = None
    truncate_after: int | None = None
    garbage: str | None = None


def split_pieces(
    text: str, *, chunks: int | None = None, chunk_size: int | None = None
) -> list[str]:
    """Cut `text` into deltas: `chunks` equal parts, or parts of `chunk_size` characters.

    An empty text gives no pieces; the concatenation of the pieces is always `text`.
    """
    if not text:
        return []
    if chunks is not None and chunks > 0:
        size, extra = divmod(len(text), chunks)
        pieces, start = [], 0
        for i in range(min(chunks, len(text))):
            end = start + size + (1 if i < extra else 0)
            pieces.append(text[start:end])
            start = end
        return [p for p in pieces if p]
    size = max(1, chunk_size or DEFAULT_CHUNK_SIZE)
    return [text[i : i + size] for i in range(0, len(text), size)]


def plan_response(turn: TurnData, request_body: Mapping[str, Any]) -> PlannedResponse:
    """Resolve defaults of `turn` (ids, stop reason, usage) for one request."""
    if turn.get("echo"):
        turn = {**turn, "content": [{"type": "text", "text": echo_text(request_body)}]}
    blocks = [_plan_block(raw) for raw in turn.get("content", [])]
    has_tool = any(b.type == "tool_use" for b in blocks)
    stop_reason = turn.get("stop_reason") or ("tool_use" if has_tool else "end_turn")
    if stop_reason not in STOP_REASONS:
        raise ValueError(f"unknown stop_reason {stop_reason!r}")
    usage_in = dict(turn.get("usage") or {})
    usage = {
        "input_tokens": int(usage_in.get("input_tokens", _estimate_input(request_body))),
        "output_tokens": int(usage_in.get("output_tokens", _estimate_output(blocks))),
        "cache_read_input_tokens": int(usage_in.get("cache_read_input_tokens", 0)),
        "cache_creation_input_tokens": int(usage_in.get("cache_creation_input_tokens", 0)),
    }
    error = turn.get("error")
    if error is not None:
        status = int(error.get("status", 500))
        error = {
            "status": status,
            "type": error.get("type") or ERROR_TYPES_BY_STATUS.get(status, "api_error"),
            "message": error.get("message") or f"Scripted error {status}.",
            "retry_after": error.get("retry_after"),
        }
    return PlannedResponse(
        model=str(turn.get("model") or request_body.get("model") or "scripted-model"),
        blocks=blocks,
        stop_reason=stop_reason,
        stop_sequence=turn.get("stop_sequence"),
        usage=usage,
        latency=float(turn.get("latency", 0.0)),
        chunk_delay=float(turn.get("chunk_delay", 0.0)),
        ping=bool(turn.get("ping", True)),
        error=error,
        stream_error=turn.get("stream_error"),
        truncate_after=turn.get("truncate_after"),
        garbage=turn.get("garbage"),
    )


def _plan_block(raw: Mapping[str, Any]) -> PlannedBlock:
    kind = raw.get("type")
    cut = {"chunks": raw.get("chunks"), "chunk_size": raw.get("chunk_size")}
    if kind == "text":
        text = str(raw.get("text", ""))
        return PlannedBlock("text", split_pieces(text, **cut), text=text)
    if kind == "thinking":
        text = str(raw.get("thinking", ""))
        return PlannedBlock(
            "thinking",
            split_pieces(text, **cut),
            text=text,
            signature=str(raw.get("signature", "scripted-signature")),
        )
    if kind == "tool_use":
        tool_input = dict(raw.get("input") or {})
        encoded = json.dumps(tool_input, separators=(",", ":"))
        tool_id = str(raw.get("id") or f"toolu_scripted_{next(_tool_ids):04d}")
        return PlannedBlock(
            "tool_use",
            split_pieces(encoded, **cut),
            tool_id=tool_id,
            tool_name=str(raw["name"]),
            tool_input=tool_input,
        )
    raise ValueError(f"unknown content block type {kind!r}")


def _estimate_input(request_body: Mapping[str, Any]) -> int:
    return max(1, len(json.dumps(request_body.get("messages", []), default=str)) // 4)


def _estimate_output(blocks: Iterable[PlannedBlock]) -> int:
    return max(1, sum(len("".join(b.pieces)) for b in blocks) // 4)


def echo_text(request_body: Mapping[str, Any]) -> str:
    """The built-in offline answer: repeats the text of the last user message.

    Works with Anthropic (`content` string or blocks) and OpenAI (`content` string or
    parts) message lists. A last message made only of tool results is acknowledged.
    """
    for message in reversed(list(request_body.get("messages") or [])):
        if message.get("role") not in ("user", "tool"):
            continue
        content = message.get("content")
        if message.get("role") == "tool":
            return "Received the tool result."
        if isinstance(content, str):
            return f"Echo: {content}" if content.strip() else "Echo: (empty message)"
        texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
        if texts:
            return "Echo: " + "\n".join(texts)
        results = [b for b in content or [] if b.get("type") == "tool_result"]
        if results:
            return f"Received {len(results)} tool result(s)."
        return "Echo: (no text)"
    return "Echo: (no user message)"


# --------------------------------------------------------------------------------------
# The queue of turns a server or fake client consumes.
