"""Messages an agent wrote over several lines (pretty-printed JSON), put back together.

ACP's stdio transport forbids embedded newlines: a pretty-printed message arrives as many
lines, none of them JSON on its own. That is one defect (``transport.newline-terminated``),
so the recorder joins the lines again: the line that completes the message carries it, as if
the agent had written it on one line, and the lines before it are marked as its parts. The
checks then judge what the agent said, and the run does not spend a timeout on every answer
(a pretty-printing agent cost 471 s and 29 harness errors before).
"""

from __future__ import annotations

from typing import Any

#: Bounds on one split message: past them the lines are left as they are (not JSON).
MAX_PARTS = 10_000
MAX_BYTES = 8 * 1024 * 1024


class SplitJoiner:
    """Follows one direction's lines; ``feed`` says when a run of lines completes a message."""

    def __init__(self) -> None:
        self._parts: list[Any] = []  # the frames of the message being joined
        self._size = 0

    def feed(self, frame: Any, parse: Any) -> list[Any]:
        """``frame`` was just recorded. When it completes a message written over several
        lines, it gets the message (``raw`` the joined lines) and the earlier frames are
        returned (they are its parts); else an empty list."""
        opens = frame.raw.lstrip()[:1] in (b"{", b"[")
        if isinstance(frame.message, dict) and "jsonrpc" in frame.message:
            self._reset()  # a whole message on one line: nothing is being joined
            return []
        if self._parts and frame.raw[:1] in (b"{", b"[") and not frame.is_json:
            # An opener at column 0 starts a message afresh (inner lines of a pretty-printed
            # one are indented): whatever was gathered before was not the start of it.
            self._reset()
        if not self._parts:
            if frame.is_json or not opens:
                return []
        elif len(self._parts) >= MAX_PARTS or self._size + len(frame.raw) > MAX_BYTES:
            self._reset()
            return []
        self._parts.append(frame)
        self._size += len(frame.raw) + 1
        if len(self._parts) < 2 or frame.raw.rstrip()[-1:] not in (b"}", b"]"):
            return []
        joined = b"\n".join(part.raw for part in self._parts)
        value, error = parse(joined)
        if error is not None or not isinstance(value, dict | list):
            return []
        parts = self._parts[:-1]
        self._reset()
        frame.message, frame.decode_error, frame.raw = value, None, joined
        frame.split_from = parts[0].seq
        for part in parts:
            part.part_of = frame.seq
        return parts

    def _reset(self) -> None:
        self._parts = []
        self._size = 0
