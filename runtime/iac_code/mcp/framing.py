"""Newline-delimited message framing for the MCP stdio transport (sans-IO).

An MCP server writes one JSON-RPC message per line on its stdout. A misbehaving server may
print an endless line (a log dump without newlines); the splitter drops such a line instead
of buffering without bound, and says so, so the reader can log it and carry on.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class DroppedLine:
    """A line longer than the limit was discarded; ``size`` counts its bytes."""

    size: int


class LineSplitter:
    """Feed bytes, get complete lines (without the newline and a trailing ``\\r``)."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._max = max_line_bytes
        self._buffer = bytearray()
        self._dropping = False
        self._dropped = 0

    def feed(self, chunk: bytes) -> list[bytes | DroppedLine]:
        out: list[bytes | DroppedLine] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._keep(chunk[start:])
                return out
            piece = chunk[start:end]
            if self._dropping:
                out.append(DroppedLine(self._dropped + len(piece)))
            elif len(self._buffer) + len(piece) > self._max:
                out.append(DroppedLine(len(self._buffer) + len(piece)))
            else:
                line = bytes(self._buffer + piece)
                out.append(line[:-1] if line.endswith(b"\r") else line)
            self._buffer.clear()
            self._dropping, self._dropped = False, 0
            start = end + 1

    def flush(self) -> bytes | DroppedLine | None:
        """At end of stream: the unterminated last line, if any."""
        if self._dropping:
            rest: bytes | DroppedLine | None = DroppedLine(self._dropped)
        else:
            rest = bytes(self._buffer) if self._buffer else None
        self._buffer.clear()
        self._dropping, self._dropped = False, 0
        return rest

    def _keep(self, rest: bytes) -> None:
        if self._dropping:
            self._dropped += len(rest)
        elif len(self._buffer) + len(rest) > self._max:
            self._dropping, self._dropped = True, len(self._buffer) + len(rest)
            self._buffer.clear()
        else:
            self._buffer += rest
