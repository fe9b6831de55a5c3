"""Newline-delimited JSON framing, sans-IO.

Nothing here awaits or touches a file descriptor: bytes go in, events come out. That keeps
the rules of the wire (SPEC §1, §1.1) testable with plain byte strings and leaves the I/O loop
around it thin.

Rules: a frame is one line terminated by ``\\n`` (a ``\\r`` before it is tolerated); blank
lines are skipped; a line longer than the limit is reported once and then skipped *without
being buffered*, so a huge line costs no memory; a final line without ``\\n`` still counts
when the input ends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "DecodeFailure",
    "FrameEvent",
    "LineFramer",
    "OversizedLine",
    "decode_line",
    "encode_message",
]

DEFAULT_MAX_LINE_BYTES: Final = 64 * 2**20


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A line went over the size limit; its bytes were discarded.

    ``limit`` is the limit in force, so the error answer can say what it is.
    """

    limit: int


FrameEvent = bytes | OversizedLine
"""What the framer yields: one complete line (without its terminator) or an oversize report."""


class LineFramer:
    """Splits a byte stream into lines, enforcing a per-line size limit.

    The limit counts the bytes before ``\\n`` (a trailing ``\\r`` included). While the
    framer is skipping an oversized line it holds no data at all, only a flag.
    """

    __slots__ = ("_buffer", "_discarding", "_max_line_bytes")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self._max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> list[FrameEvent]:
        """Consume ``data`` and return the events it completes, in order."""
        events: list[FrameEvent] = []
        if self._discarding:
            newline = data.find(b"\n")
            if newline < 0:
                return events
            data = data[newline + 1 :]
            self._discarding = False
        if not data:
            return events
        pieces = data.split(b"\n")
        tail = pieces.pop()  # the text after the last "\n" (possibly empty)
        if pieces:
            if self._buffer:
                self._buffer += pieces[0]
                pieces[0] = bytes(self._buffer)
                self._buffer.clear()
            for line in pieces:
                self._emit(line, events)
        self._hold(tail, events)
        return events

    def close(self) -> list[FrameEvent]:
        """The input ended: a pending unterminated line becomes a last event."""
        events: list[FrameEvent] = []
        if self._buffer:
            line = bytes(self._buffer)
            self._buffer.clear()
            self._emit(line, events)
        self._discarding = False
        return events

    def _emit(self, line: bytes, events: list[FrameEvent]) -> None:
        if len(line) > self._max_line_bytes:
            events.append(OversizedLine(self._max_line_bytes))
            return
        if line.endswith(b"\r"):
            line = line[:-1]
        if line and not line.isspace():
            events.append(line)

    def _hold(self, tail: bytes, events: list[FrameEvent]) -> None:
        """Keep an unterminated tail, unless it has already outgrown the limit."""
        if not tail:
            return
        if len(self._buffer) + len(tail) > self._max_line_bytes:
            self._buffer.clear()
            self._discarding = True
            events.append(OversizedLine(self._max_line_bytes))
            return
        self._buffer += tail


@dataclass(frozen=True, slots=True)
class DecodeFailure:
    """A line that is not UTF-8 JSON; ``reason`` is a short phrase safe to put on the wire."""

    reason: str


def _reject_constant(name: str) -> Any:
    # json.loads accepts NaN and Infinity, which are not JSON; treat them as a syntax error.
    raise ValueError(f"{name} is not valid JSON")


def decode_line(line: bytes) -> object:
    """Parse one frame; returns the JSON value or a :class:`DecodeFailure`.

    The bytes are decoded as UTF-8 first: ``json.loads`` would otherwise guess UTF-16/32.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return DecodeFailure(f"invalid UTF-8 at byte {exc.start}")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return DecodeFailure(f"invalid JSON at character {exc.pos}")
    except RecursionError:
        return DecodeFailure("JSON nested too deeply")
    except ValueError:
        # e.g. NaN/Infinity, or an integer beyond the interpreter's digit limit
        return DecodeFailure("invalid JSON value")


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_COMPACT_ASCII = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def encode_message(message: object) -> bytes:
    """Serialise one message as a compact JSON line ending in ``\\n``.

    JSON escapes control characters inside strings, so the only newline is the terminator.
    Raises ``TypeError``/``ValueError`` for values that are not JSON (including NaN).
    """
    text = _COMPACT.encode(message)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate (possible after decoding "\\ud800" from a peer) cannot be UTF-8;
        # the ASCII form escapes it and is still valid JSON.
        return _COMPACT_ASCII.encode(message).encode("ascii") + b"\n"
