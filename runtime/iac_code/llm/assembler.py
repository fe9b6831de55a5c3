"""Turns the Anthropic streaming event sequence into our stream events and final response.

Shared by the real client (fed SDK objects or decoded SSE dicts) and the in-memory fake
(fed dicts), so both produce exactly the same events. Stdlib only. Each wire event maps to
at most one of our events, and text is joined once per block, so the per-delta cost stays a
few attribute look-ups and one small object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from iac_code.unicode_text import clean_json, clean_text

from .contract import (
    BlockFinished,
    ContentBlock,
    MessageFinished,
    ModelAuthError,
    ModelError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponse,
    ModelResponseError,
    ModelServerError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    ToolUseInputDelta,
    ToolUseStarted,
    Usage,
)

_SERVER_ERROR_TYPES = frozenset({"api_error", "overloaded_error", "timeout_error"})
_AUTH_ERROR_TYPES = frozenset({"authentication_error", "permission_error"})


def error_from_api(
    status: int | None,
    error_type: str | None,
    message: str,
    *,
    retry_after: float | None = None,
) -> ModelError:
    """Map an API error (HTTP status and/or the body's ``error.type``) to our hierarchy.

    Errors reported inside a 200 stream have no useful status, so the type decides there.
    """
    if status in (401, 403) or error_type in _AUTH_ERROR_TYPES:
        return ModelAuthError(message, status_code=status)
    if status == 429 or error_type == "rate_limit_error":
        return ModelRateLimitError(message, status_code=status, retry_after=retry_after)
    if (status is not None and status >= 500) or error_type in _SERVER_ERROR_TYPES:
        return ModelServerError(message, status_code=status, retry_after=retry_after)
    if status == 408 or status == 409:  # request timeout / conflict: worth another try
        return ModelServerError(message, status_code=status, retry_after=retry_after)
    if status is not None and 400 <= status < 500:
        return ModelRequestError(message, status_code=status)
    return ModelServerError(message, status_code=status, retry_after=retry_after)


class _OpenBlock:
    """A content block still receiving deltas."""

    __slots__ = ("block", "pieces", "tool_id")

    def __init__(self, block: ContentBlock) -> None:
        self.block = block
        self.pieces: list[str] = []
        self.tool_id: str = block.get("id", "")


class StreamAssembler:
    """State machine over one message stream.

    Call the typed methods in wire order (or `feed` with decoded event dicts); each returns
    the event to hand to the caller, or None. `message_stop` returns `MessageFinished`.
    Out-of-order or incomplete streams raise `ModelResponseError`.
    """

    def __init__(self) -> None:
        self.started = False
        self.finished = False
        self.message_id = ""
        self.model = ""
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.usage = Usage()
        self._open: dict[int, _OpenBlock] = {}
        self._done: dict[int, ContentBlock] = {}

    # -- typed steps --------------------------------------------------------------------

    def start(self, message_id: str, model: str, usage: Mapping[str, Any] | None) -> None:
        self.started = True
        self.message_id = message_id
        self.model = model
        self._merge_usage(usage or {})

    def block_start(self, index: int, block: Mapping[str, Any]) -> StreamEvent | None:
        self._require_started()
        kind = block.get("type")
        if kind == "text":
            fresh: ContentBlock = {"type": "text", "text": block.get("text") or ""}
        elif kind == "thinking":
            fresh = {
                "type": "thinking",
                "thinking": block.get("thinking") or "",
                "signature": block.get("signature") or "",
            }
        elif kind == "tool_use":
            fresh = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        else:  # redacted_thinking, server tools, ...: kept verbatim for the history
            fresh = dict(block)
        opened = _OpenBlock(fresh)
        if kind in ("text", "thinking") and fresh.get(kind):
            opened.pieces.append(fresh[kind])
        self._open[index] = opened
        if kind == "tool_use":
            return ToolUseStarted(fresh["id"], fresh["name"], index)
        return None

    def text(self, index: int, text: str) -> TextDelta:
        # The raw piece is kept (a surrogate pair split over two deltas joins up again at
        # block_stop); what is relayed has no lone surrogate.
        self._block(index).pieces.append(text)
        return TextDelta(clean_text(text), index)

    def thinking(self, index: int, text: str) -> ThinkingDelta:
        self._block(index).pieces.append(text)
        return ThinkingDelta(clean_text(text), index)

    def signature(self, index: int, signature: str) -> ThinkingSignature:
        self._block(index).block["signature"] = signature
        return ThinkingSignature(signature, index)

    def input_json(self, index: int, partial_json: str) -> ToolUseInputDelta:
        opened = self._block(index)
        opened.pieces.append(partial_json)
        return ToolUseInputDelta(opened.tool_id, partial_json, index)

    def block_stop(self, index: int) -> BlockFinished:
        opened = self._open.pop(index, None)
        if opened is None:
            raise ModelResponseError(f"content_block_stop for unknown block {index}")
        block = opened.block
        kind = block.get("type")
        if kind == "text":
            block["text"] = clean_text("".join(opened.pieces))
        elif kind == "thinking":
            block["thinking"] = clean_text("".join(opened.pieces))
        elif kind == "tool_use":
            raw = "".join(opened.pieces)
            try:
                block["input"] = clean_json(json.loads(raw)) if raw.strip() else {}
            except ValueError as exc:
                raise ModelResponseError(
                    f"tool input of {block['name']!r} is not valid JSON"
                ) from exc
        self._done[index] = block
        return BlockFinished(index, block)

    def message_delta(
        self, stop_reason: str | None, stop_sequence: str | None, usage: Mapping[str, Any] | None
    ) -> None:
        self._require_started()
        self.stop_reason = stop_reason
        self.stop_sequence = stop_sequence
        self._merge_usage(usage or {})

    def message_stop(self) -> MessageFinished:
        self._require_started()
        if self._open:
            raise ModelResponseError("the stream stopped with content blocks still open")
        self.finished = True
        content = [self._done[i] for i in sorted(self._done)]
        return MessageFinished(
            ModelResponse(
                content=content,
                stop_reason=self.stop_reason,
                usage=self.usage,
                model=self.model,
                message_id=self.message_id,
                stop_sequence=self.stop_sequence,
            )
        )

    def check_complete(self) -> None:
        """Raise when the stream ended (EOF) before ``message_stop``."""
        if not self.started:
            raise ModelResponseError("the response was not a message event stream")
        if not self.finished:
            raise ModelResponseError("the stream was cut off before message_stop", retryable=True)

    # -- decoded dicts ------------------------------------------------------------------

    def feed(self, event: Mapping[str, Any]) -> StreamEvent | None:
        """Apply one decoded wire event (the JSON ``data`` of an SSE event)."""
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event["delta"]
            dtype = delta.get("type")
            if dtype == "text_delta":
                return self.text(event["index"], delta["text"])
            if dtype == "input_json_delta":
                return self.input_json(event["index"], delta["partial_json"])
            if dtype == "thinking_delta":
                return self.thinking(event["index"], delta["thinking"])
            if dtype == "signature_delta":
                return self.signature(event["index"], delta["signature"])
            return None  # citations and future delta kinds carry nothing we relay
        if kind == "content_block_start":
            return self.block_start(event["index"], event["content_block"])
        if kind == "content_block_stop":
            return self.block_stop(event["index"])
        if kind == "message_start":
            message = event["message"]
            self.start(message.get("id", ""), message.get("model", ""), message.get("usage"))
            return None
        if kind == "message_delta":
            delta = event.get("delta") or {}
            self.message_delta(
                delta.get("stop_reason"), delta.get("stop_sequence"), event.get("usage")
            )
            return None
        if kind == "message_stop":
            return self.message_stop()
        if kind == "error":
            error = event.get("error") or {}
            detail = error.get("message") or "unknown error"
            raise error_from_api(
                None, error.get("type"), f"The model API reported an error in the stream: {detail}"
            )
        return None  # ping and unknown events

    # -- helpers ------------------------------------------------------------------------

    def _block(self, index: int) -> _OpenBlock:
        try:
            return self._open[index]
        except KeyError:
            raise ModelResponseError(f"delta for unknown content block {index}") from None

    def _require_started(self) -> None:
        if not self.started:
            raise ModelResponseError("stream events arrived before message_start")

    def _merge_usage(self, usage: Mapping[str, Any]) -> None:
        """Usage numbers are running totals: later values replace earlier ones."""
        value = usage.get("input_tokens")
        if value is not None:
            self.usage.input_tokens = int(value)
        value = usage.get("output_tokens")
        if value is not None:
            self.usage.output_tokens = int(value)
        value = usage.get("cache_read_input_tokens")
        if value is not None:
            self.usage.cache_read_tokens = int(value)
        value = usage.get("cache_creation_input_tokens")
        if value is not None:
            self.usage.cache_write_tokens = int(value)
