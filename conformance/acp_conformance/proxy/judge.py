"""The proxy's judge, a separate low-priority process (``python -m acp_conformance.proxy.judge``).

Judging costs CPU (parsing and validating every frame); the relay's job is to never slow
the session it watches. So the relay process only copies bytes, and hands a copy of every
chunk to this process over a pipe. It runs at a lower priority (``nice``), so on a busy
machine the editor, the agent and the relay get the CPU first and the judge catches up
when they idle. It prints findings as it reaches them and writes the reports at the end.

Its input is a sequence of records: one header byte of direction (``c``/``a``), one of
kind (``d`` data, ``s`` a skipped chunk, ``e`` that direction's EOF, ``x`` the end, with
the relay's outcome as JSON), a 4-byte big-endian length, then the payload.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import struct
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TextIO

from ..harness.limits import Line
from ..harness.limits import LineSplitter as BoundedSplitter
from ..harness.recorder import Direction
from ..report.terminal_safe import printable
from ..v2_drafts import NEWEST
from .monitor import Finding, LiveMonitor

HEADER = struct.Struct(">ccI")
NICENESS = 10


def record(direction: Direction, kind: bytes, payload: bytes) -> bytes:
    return HEADER.pack(direction[0].encode(), kind, len(payload)) + payload


class LineSplitter:
    """Cuts one direction's byte stream into lines, never holding more than the line cap
    of one (:class:`..harness.limits.LineSplitter`)."""

    def __init__(self) -> None:
        self._cut = BoundedSplitter()
        #: Set after a skipped chunk: discard up to the next newline to find a line start.
        self.resync = False

    def skip(self) -> None:
        """A chunk was skipped: what was read of the current line is no line any more."""
        self._cut = BoundedSplitter()
        self.resync = True

    def lines(self, data: bytes) -> list[Line]:
        found = self._cut.feed(data)
        if self.resync and found:
            found.pop(0)
            self.resync = False
        elif self.resync:
            self._cut = BoundedSplitter()
        return [line for line in found if line.oversized or line.data.strip()]

    def finish(self) -> Line | None:
        """The last line when the stream ends without a newline, if there is one to judge."""
        last = self._cut.finish()
        self._cut = BoundedSplitter()
        if last is None or self.resync or not (last.oversized or last.data.strip()):
            return None
        return last


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


def _read_exact(stream: Readable, size: int) -> bytes | None:
    data = stream.read(size)
    return data if len(data) == size else None


class ThenSpill:
    """The relay's pipe, then (after its end) the spill file the relay leaves when it exits
    before the judge is done: one byte stream, a record may start in one and end in the
    other. The file is removed once read."""

    def __init__(self, pipe: BinaryIO, spill: Path | None) -> None:
        self._current = pipe
        self._spill = spill
        self._opened: BinaryIO | None = None

    def read(self, size: int) -> bytes:
        data = self._current.read(size)
        while len(data) < size and self._next():
            data += self._current.read(size - len(data))
        return data

    def _next(self) -> bool:
        if self._spill is None or self._opened is not None:
            return False
        try:
            self._opened = self._current = self._spill.open("rb")
        except OSError:
            return False  # no hand-off: the pipe was everything
        with contextlib.suppress(OSError):
            self._spill.unlink()  # the open file stays readable
        return True

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()


class Judge:
    def __init__(self, monitor: LiveMonitor, log: TextIO) -> None:
        self.monitor = monitor
        self.log = log
        self.splitters: dict[Direction, LineSplitter] = {
            "c2a": LineSplitter(),
            "a2c": LineSplitter(),
        }

    def report(self, findings: list[Finding]) -> None:
        if not findings:
            return
        try:
            self.log.write(
                "".join(f"acp-conformance proxy: {printable(f.describe())}\n" for f in findings)
            )
            self.log.flush()
        except (OSError, ValueError):
            pass  # nobody reads our findings any more; the reports still get written

    def consume(self, stream: Readable) -> dict[str, Any]:
        """Judge records until the end record (its outcome) or EOF (an empty outcome)."""
        outcome: dict[str, Any] = {}
        while (header := _read_exact(stream, HEADER.size)) is not None:
            side, kind, size = HEADER.unpack(header)
            payload = _read_exact(stream, size) if size else b""
            if payload is None:
                break
            if kind == b"x":
                outcome = json.loads(payload)
                break
            direction: Direction = "c2a" if side == b"c" else "a2c"
            self.chunk(direction, kind, payload)
        self.report(self.monitor.finish())
        return outcome

    def chunk(self, direction: Direction, kind: bytes, data: bytes) -> None:
        splitter = self.splitters[direction]
        if kind == b"s":
            splitter.skip()
            return
        for line in splitter.lines(data):
            self._feed(direction, line)
        if kind == b"e" and (last := splitter.finish()) is not None:
            self._feed(direction, last)

    def _feed(self, direction: Direction, line: Line) -> None:
        oversized = line.size if line.oversized else 0
        found = self.monitor.feed(
            direction, line.data, terminated=line.terminated, oversized=oversized
        )
        self.report(found)


def main(argv: list[str] | None = None) -> int:
    from .reports import to_data, write_html, write_json

    parser = argparse.ArgumentParser(prog="python -m acp_conformance.proxy.judge")
    parser.add_argument("--agent-json", required=True, help="the agent command, as JSON")
    parser.add_argument("--report-json", type=Path)
    parser.add_argument("--html", type=Path)
    parser.add_argument("--log", type=Path)
    parser.add_argument("--profile", default="acp")
    parser.add_argument("--v2-draft", default=NEWEST, help="the v2 draft graded")
    parser.add_argument("--spill", type=Path, help="where the rest is if the relay exits first")
    args = parser.parse_args(argv)
    # The relay forwards the editor's signals to the agent; the judge must outlive them
    # long enough to write the reports (it ends when the relay's pipe closes).
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    started = time.time()
    log: TextIO = args.log.open("a", encoding="utf-8") if args.log else sys.stderr
    judge = Judge(LiveMonitor(args.profile, args.v2_draft), log)
    stream = ThenSpill(sys.stdin.buffer, args.spill)
    outcome = judge.consume(stream)
    stream.close()
    if args.log:
        log.close()
    if not outcome:
        judge.monitor.notes.append("the relay ended without saying how (it was killed?)")
    for note in outcome.get("notes", []):
        judge.monitor.notes.append(note)
    data = to_data(
        json.loads(args.agent_json),
        judge.monitor,
        exit_code=outcome.get("exitCode"),
        closed=outcome.get("closed", []),
        skipped=outcome.get("skipped", 0),
        started=outcome.get("started", started),
    )
    for path, writer in ((args.report_json, write_json), (args.html, write_html)):
        if path:
            try:
                writer(path, data)
            except OSError as exc:
                print(f"acp-conformance proxy: cannot write {path}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
