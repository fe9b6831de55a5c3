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
from typing import Any, BinaryIO, TextIO

from ..harness.recorder import Direction
from .monitor import Finding, LiveMonitor

HEADER = struct.Struct(">ccI")
NICENESS = 10


def record(direction: Direction, kind: bytes, payload: bytes) -> bytes:
    return HEADER.pack(direction[0].encode(), kind, len(payload)) + payload


class LineSplitter:
    """Cuts one direction's byte stream into lines."""

    def __init__(self) -> None:
        self.partial = b""
        #: Set after a skipped chunk: discard up to the next newline to find a line start.
        self.resync = False

    def lines(self, data: bytes) -> list[bytes]:
        data = self.partial + data
        parts = data.split(b"\n")
        self.partial = parts.pop()
        if self.resync and parts:
            parts.pop(0)
            self.resync = False
        elif self.resync:
            self.partial = b""
        return [p for p in parts if p.strip()]


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if len(data) == size else None


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
            self.log.write("".join(f"acp-conformance proxy: {f.describe()}\n" for f in findings))
            self.log.flush()
        except (OSError, ValueError):
            pass  # nobody reads our findings any more; the reports still get written

    def consume(self, stream: BinaryIO) -> dict[str, Any]:
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
            splitter.partial, splitter.resync = b"", True
            return
        for line in splitter.lines(data):
            self.report(self.monitor.feed(direction, line))
        if kind == b"e":
            rest, splitter.partial = splitter.partial, b""
            if rest.strip() and not splitter.resync:
                self.report(self.monitor.feed(direction, rest, terminated=False))


def main(argv: list[str] | None = None) -> int:
    from .reports import to_data, write_html, write_json

    parser = argparse.ArgumentParser(prog="python -m acp_conformance.proxy.judge")
    parser.add_argument("--agent-json", required=True, help="the agent command, as JSON")
    parser.add_argument("--report-json", type=Path)
    parser.add_argument("--html", type=Path)
    parser.add_argument("--log", type=Path)
    parser.add_argument("--profile", default="acp")
    args = parser.parse_args(argv)
    # The relay forwards the editor's signals to the agent; the judge must outlive them
    # long enough to write the reports (it ends when the relay's pipe closes).
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    started = time.time()
    log: TextIO = args.log.open("a", encoding="utf-8") if args.log else sys.stderr
    judge = Judge(LiveMonitor(args.profile), log)
    outcome = judge.consume(sys.stdin.buffer)
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
