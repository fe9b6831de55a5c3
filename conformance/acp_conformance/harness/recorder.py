"""Records everything that crosses the wire between the checker and one agent process.

The recorder is deliberately dumb: it keeps raw bytes, the parsed JSON (when a line parsed),
the direction and a monotonic timestamp for every line, plus a bounded copy of stderr. All
judgement (schema validity, ordering, hygiene) happens later over the recorded frames, so a
transcript can be re-evaluated offline exactly as it was evaluated live.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from .limits import MAX_DEPTH, Budgets, oversized_reason
from .split_frames import SplitJoiner

Direction = Literal["c2a", "a2c"]

#: The parsed value of a line that was not valid JSON.
NOT_JSON: Any = object()


@dataclass
class Frame:
    """One line on the wire (without its terminating newline)."""

    seq: int
    t: float
    direction: Direction
    raw: bytes
    message: Any = NOT_JSON
    decode_error: str | None = None
    #: False only for the agent's final bytes when stdout closed without a newline.
    terminated: bool = True
    #: True for lines the checker sent on purpose to probe bad-input handling; they are
    #: exempt from the checker's own schema self-check.
    deliberate: bool = False
    #: The line's full length when it went over the line cap and only its head is in
    #: ``raw`` (0: the whole line is in ``raw``).
    oversized: int = 0
    #: On the line that completed a message written over several lines (see
    #: :mod:`.split_frames`): the seq of its first line; ``raw`` is then all of its lines.
    split_from: int | None = None
    #: On the earlier lines of such a message: the seq of the line that completed it.
    part_of: int | None = None

    @property
    def is_json(self) -> bool:
        return self.message is not NOT_JSON

    def text(self, limit: int = 2000) -> str:
        """The line as readable text, shortened for reports."""
        body = self.raw.decode("utf-8", errors="replace")
        if len(body) > limit:
            body = body[:limit] + f"... [{len(self.raw)} bytes]"
        elif self.oversized:
            body += f"... [{self.oversized} bytes, over the line cap]"
        return body

    def to_json(self, limit: int = 2000) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "t": round(self.t, 6),
            "dir": self.direction,
            "line": self.text(limit),
            **({"notJson": self.decode_error} if self.decode_error else {}),
            **({"unterminated": True} if not self.terminated else {}),
            **({"deliberate": True} if self.deliberate else {}),
            **({"oversized": self.oversized} if self.oversized else {}),
            **({"splitFrom": self.split_from} if self.split_from is not None else {}),
            **({"partOf": self.part_of} if self.part_of is not None else {}),
        }


def decode_line(raw: bytes, *, oversized: int, terminated: bool) -> tuple[Any, str | None]:
    """`parse_line`, except that a line over the cap (``oversized``: its full length, of which
    ``raw`` is the head) is judged as that and never parsed."""
    if oversized:
        return NOT_JSON, oversized_reason(oversized, finished=terminated)
    return parse_line(raw)


def parse_line(raw: bytes) -> tuple[Any, str | None]:
    """Decode one line as UTF-8 JSON; returns (value, None) or (NOT_JSON, reason).

    Hostile input is judged here, as the sender's wire defect, before anything else sees it:
    a line nested deeper than ``MAX_DEPTH`` (the parser and the schema validator recurse) and
    a string escaping a lone surrogate (valid JSON text, but no Unicode string: printing or
    re-encoding it fails) are "not JSON" with the reason.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return NOT_JSON, f"invalid UTF-8 at byte {exc.start}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return NOT_JSON, f"invalid JSON: {exc.msg} (col {exc.colno})"
    except RecursionError:
        return NOT_JSON, f"nested deeper than the checker's limit of {MAX_DEPTH} levels"
    problem = hostile_value(raw, value)
    if problem is not None:
        return NOT_JSON, problem
    return value, None


#: A JSON escape of a surrogate code unit (only these can leave a lone surrogate behind).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def hostile_value(raw: bytes, value: Any) -> str | None:
    """Why a parsed line must not be handed on (too deep, a lone surrogate), or None. The walk
    is skipped when the raw line shows it cannot find anything (the usual case)."""
    deep = raw.count(b"[") + raw.count(b"{") > MAX_DEPTH
    surrogates = _SURROGATE_ESCAPE.search(raw) is not None
    if not (deep or surrogates):
        return None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > MAX_DEPTH:
                return f"nested deeper than the checker's limit of {MAX_DEPTH} levels"
            if isinstance(node, dict):
                stack.extend((key, depth + 1) for key in node)
                stack.extend((item, depth + 1) for item in node.values())
            else:
                stack.extend((item, depth + 1) for item in node)
        elif surrogates and isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError as exc:
                return (
                    f"invalid Unicode: a string escapes a lone surrogate "
                    f"(U+{ord(node[exc.start]):04X}), which no UTF-8 text can carry"
                )
    return None


class BoundedBuffer:
    """Keeps the first and last part of a byte stream up to ``limit`` bytes in total."""

    def __init__(self, limit: int = 256 * 1024) -> None:
        self.limit = limit
        self.total = 0
        self._head = bytearray()
        self._tail = bytearray()

    def write(self, data: bytes) -> None:
        self.total += len(data)
        half = self.limit // 2
        room = half - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > half:
                del self._tail[: len(self._tail) - half]

    def getvalue(self) -> bytes:
        if self.total <= self.limit:
            return bytes(self._head + self._tail)
        skipped = self.total - len(self._head) - len(self._tail)
        return bytes(self._head) + f"\n[... {skipped} bytes skipped ...]\n".encode() + self._tail


@dataclass
class Recorder:
    """Frames of one agent process, in the order the checker saw them."""

    frames: list[Frame] = field(default_factory=list)
    stderr: BoundedBuffer = field(default_factory=BoundedBuffer)
    started: float = field(default_factory=time.monotonic)
    #: The same moment on the wall clock, to place the process within the whole run.
    started_wall: float = field(default_factory=time.time)
    #: Sequence numbers of requests whose answer the checker stopped waiting for (the check
    #: that sent them reported the timeout; the agent may have been stopped before it could
    #: answer).
    abandoned: set[int] = field(default_factory=set)
    #: The bounds on how much of the agent's output is kept (see :mod:`.limits`).
    budgets: Budgets = field(default_factory=Budgets)
    #: Why the checker stopped reading this process's output (a line over the cap, a
    #: flood), or None.
    overflow: str | None = None
    #: Joins the agent's messages written over several lines (see :mod:`.split_frames`).
    joiner: SplitJoiner = field(default_factory=SplitJoiner)

    def admit(self, size: int) -> bool:
        """Whether one more agent line of ``size`` bytes may be kept; once not, ``overflow``
        says why and stays set."""
        if self.overflow is None:
            self.overflow = self.budgets.admit(size)
        return self.overflow is None

    def add(
        self,
        direction: Direction,
        raw: bytes,
        *,
        terminated: bool = True,
        deliberate: bool = False,
        oversized: int = 0,
    ) -> Frame:
        message, error = decode_line(raw, oversized=oversized, terminated=terminated)
        frame = Frame(
            seq=len(self.frames),
            t=time.monotonic() - self.started,
            direction=direction,
            raw=raw,
            message=message,
            decode_error=error,
            terminated=terminated,
            deliberate=deliberate,
            oversized=oversized,
        )
        self.frames.append(frame)
        if direction == "a2c" and not oversized:
            self.joiner.feed(frame, parse_line)
        return frame

    def stderr_text(self) -> str:
        return self.stderr.getvalue().decode("utf-8", errors="replace")
