"""How much of a peer's output the checker holds: the line cap and the transcript budgets.

The checker is run on other people's agents (and clients), so what they write must not decide
how much memory it takes. Three bounds, all documented in README and MAINTAINING:

- a line cap: a line longer than ``MAX_LINE_BYTES`` is not buffered; its first
  ``OVERSIZED_HEAD`` bytes are kept as evidence and the rest is thrown away unread;
- a per-process budget: at most ``PROCESS_FRAMES`` lines and ``PROCESS_BYTES`` bytes of one
  agent's output are kept;
- a run-wide budget shared by every process of one run (``RUN_FRAMES``, ``RUN_BYTES``), so a
  run of many flooding processes stays bounded too.

Going over any of them is the peer's transport failure (``transport.output-bounded``): the
checker stops reading that process, and the scenario ends with that verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MiB = 1024 * 1024

#: The longest line the checker reads (ACP sets no limit; 4 MiB is far above any message a
#: real agent sends, and a parsed line costs several times its size in memory).
MAX_LINE_BYTES = 4 * MiB
#: What is kept of a line over the cap, as evidence.
OVERSIZED_HEAD = 4096
#: How deep a JSON value may nest (ACP messages nest a dozen levels; Python's parser and the
#: schema validator recurse, so a deeper line is judged here, before either sees it).
MAX_DEPTH = 200
#: Output kept per agent process.
PROCESS_FRAMES = 10_000
PROCESS_BYTES = 16 * MiB
#: Output kept per run, over all its processes (iac-code's own run: 1,720 frames, 778 in its
#: busiest process).
RUN_FRAMES = 30_000
RUN_BYTES = 64 * MiB


def size_text(size: int) -> str:
    return f"{size / MiB:.1f} MiB" if size >= MiB else f"{size} bytes"


@dataclass
class Line:
    """One line of a peer's output, without its newline."""

    data: bytes
    terminated: bool
    #: The line's full length; larger than ``len(data)`` when it went over the cap and only
    #: its head was kept.
    size: int

    @property
    def oversized(self) -> bool:
        return self.size > len(self.data)


class LineSplitter:
    """Cuts a byte stream into lines without ever holding more than the cap of one line."""

    def __init__(self, cap: int = MAX_LINE_BYTES) -> None:
        self.cap = cap
        self._buf = bytearray()
        #: Length so far of a line that went over the cap (0: none in progress).
        self._over = 0
        self._head = b""

    def feed(self, chunk: bytes) -> list[Line]:
        lines: list[Line] = []
        start = 0
        while start < len(chunk):
            cut = chunk.find(b"\n", start)
            end = len(chunk) if cut < 0 else cut
            if self._over:
                self._over += end - start
            else:
                self._buf += chunk[start:end]
                if len(self._buf) > self.cap:
                    self._head = bytes(self._buf[:OVERSIZED_HEAD])
                    self._over = len(self._buf)
                    self._buf = bytearray()
            if cut < 0:
                break
            lines.append(self._take(terminated=True))
            start = cut + 1
        return lines

    def finish(self) -> Line | None:
        """What is left when the stream ends (a line without its newline), if anything."""
        if self._buf or self._over:
            return self._take(terminated=False)
        return None

    @property
    def pending(self) -> int:
        """Bytes of the unfinished line read so far."""
        return self._over or len(self._buf)

    def _take(self, *, terminated: bool) -> Line:
        if self._over:
            line = Line(self._head, terminated, self._over)
            self._over, self._head = 0, b""
        else:
            line = Line(bytes(self._buf), terminated, len(self._buf))
            self._buf = bytearray()
        return line


@dataclass
class OutputBudget:
    """Lines and bytes a run (or one process) may still keep."""

    frames: int
    bytes: int
    used_frames: int = 0
    used_bytes: int = 0

    def charge(self, size: int) -> bool:
        """Count one line of ``size`` bytes; False when it does not fit any more."""
        if self.used_frames + 1 > self.frames or self.used_bytes + size > self.bytes:
            return False
        self.used_frames += 1
        self.used_bytes += size
        return True

    def describe(self, who: str) -> str:
        return f"{who}'s budget of {self.frames} lines / {size_text(self.bytes)}"


def run_budget() -> OutputBudget:
    return OutputBudget(RUN_FRAMES, RUN_BYTES)


def process_budget() -> OutputBudget:
    return OutputBudget(PROCESS_FRAMES, PROCESS_BYTES)


@dataclass
class Budgets:
    """The budgets one process's output is charged to."""

    process: OutputBudget = field(default_factory=process_budget)
    run: OutputBudget | None = None

    def admit(self, size: int) -> str | None:
        """None when a line of ``size`` bytes may be kept, else why not."""
        if not self.process.charge(size):
            return f"the agent wrote more than the {self.process.describe('process')}"
        if self.run is not None and not self.run.charge(size):
            return f"the agent's processes wrote more than the {self.run.describe('run')}"
        return None


def oversized_reason(size: int, *, finished: bool, cap: int = MAX_LINE_BYTES) -> str:
    length = size_text(size) if finished else f"more than {size_text(size)}"
    return (
        f"a line of {length}, over the checker's line cap of {size_text(cap)} "
        f"(its first {OVERSIZED_HEAD} bytes are kept)"
    )
