"""The byte relay between the editor (our stdin/stdout) and the agent process.

One thread per direction copies whatever ``os.read`` returns straight to the other side
with ``os.write``, untouched, after queueing a copy for the monitor thread, which splits
it into lines and judges them. So the monitor can fall behind but never delays,
reorders or re-encodes a byte. The agent inherits our stderr (its logs pass through as
they are); our findings go to stderr as whole lines, or to ``--log``.

Pipes may close at any moment on either side: a side that stopped reading is drained
(and its traffic still judged) so the other never blocks; our stdin's EOF becomes the
agent's, the agent's stdout EOF becomes ours. SIGTERM, SIGINT and SIGHUP are passed to the
agent's process group (it has its own, so a terminal's Ctrl-C reaches it once), and the
proxy exits with the agent's exit code (128+N for a signal N).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..harness.recorder import Direction
from .monitor import Finding, LiveMonitor

CHUNK = 64 * 1024
#: Bytes the monitor may lag behind before it skips (and says so) instead of growing.
MONITOR_BACKLOG = 64 * 1024 * 1024
#: How long the agent's stdout may stay open after the agent exited (a child holding it).
DRAIN_AFTER_EXIT = 5.0
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class _LineSplitter:
    """Cuts one direction's byte stream into lines for the monitor."""

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


@dataclass
class RelayResult:
    exit_code: int
    monitor: LiveMonitor
    skipped_bytes: int = 0
    closed: list[str] = field(default_factory=list)


class Relay:
    def __init__(
        self,
        argv: list[str],
        monitor: LiveMonitor,
        log: TextIO,
        *,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
    ) -> None:
        self.argv = argv
        self.monitor = monitor
        self.log = log
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self._queue: queue.SimpleQueue[tuple[Direction, bytes, str] | None] = queue.SimpleQueue()
        self._backlog = 0
        self._backlog_lock = threading.Lock()
        self.skipped = 0
        self.closed: list[str] = []
        self._log_lock = threading.Lock()

    # -- findings -----------------------------------------------------------------------

    def report(self, findings: list[Finding]) -> None:
        if not findings:
            return
        text = "".join(f"acp-conformance proxy: {f.describe()}\n" for f in findings)
        with self._log_lock:
            try:
                self.log.write(text)
                self.log.flush()
            except (OSError, ValueError):
                pass  # a closed log must not stop the relay

    # -- threads ------------------------------------------------------------------------

    def _enqueue(self, direction: Direction, data: bytes, kind: str = "data") -> None:
        """Queue a copy for the judge; past the backlog bound the copy is dropped instead."""
        with self._backlog_lock:
            if kind == "data" and self._backlog + len(data) > MONITOR_BACKLOG:
                self.skipped += len(data)
                data, kind = b"", "skip"
            self._backlog += len(data)
        self._queue.put((direction, data, kind))

    def _pump(
        self,
        direction: Direction,
        source: int,
        target: int,
        on_eof: Callable[[], None],
        name: str,
    ) -> None:
        target_open = True
        while True:
            try:
                data = os.read(source, CHUNK)
            except OSError:
                data = b""
            if not data:
                break
            # The copy is queued before the bytes go on, so that whatever the other side
            # sends because of them is queued after them: the judge sees causal order.
            self._enqueue(direction, data)
            if target_open:
                try:
                    _write_all(target, data)
                except OSError:
                    target_open = False  # the reader went away: keep draining, keep judging
                    self.closed.append(name)
        self._enqueue(direction, b"", "eof")
        on_eof()

    def _judge(self) -> None:
        splitters = {"c2a": _LineSplitter(), "a2c": _LineSplitter()}
        while (item := self._queue.get()) is not None:
            direction, data, kind = item
            with self._backlog_lock:
                self._backlog -= len(data)
            splitter = splitters[direction]
            if kind == "skip":
                splitter.partial, splitter.resync = b"", True
                continue
            for line in splitter.lines(data):
                self.report(self.monitor.feed(direction, line))
            if kind == "eof":
                rest, splitter.partial = splitter.partial, b""
                if rest.strip() and not splitter.resync:
                    self.report(self.monitor.feed(direction, rest, terminated=False))
        if self.skipped:
            self.monitor.notes.append(
                f"the monitor fell {MONITOR_BACKLOG} bytes behind and skipped judging "
                f"{self.skipped} bytes (all of them were relayed)"
            )
        self.report(self.monitor.finish())

    # -- the whole run ------------------------------------------------------------------

    def run(self) -> RelayResult:
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as exc:
            self.log.write(f"acp-conformance proxy: cannot start {self.argv[0]}: {exc}\n")
            self.log.flush()
            return RelayResult(127, self.monitor)
        assert proc.stdin is not None and proc.stdout is not None
        agent_in, agent_out = proc.stdin, proc.stdout
        previous = self._forward_signals(proc)
        judge = threading.Thread(target=self._judge, name="acp-proxy-judge", daemon=True)
        judge.start()

        def close_agent_stdin() -> None:
            with contextlib.suppress(OSError):
                agent_in.close()

        def close_our_stdout() -> None:
            with contextlib.suppress(OSError):
                os.close(self.stdout_fd)

        upstream = threading.Thread(
            target=self._pump,
            args=("c2a", self.stdin_fd, agent_in.fileno(), close_agent_stdin, "agent stdin"),
            name="acp-proxy-c2a",
            daemon=True,  # a client that never closes our stdin must not keep us alive
        )
        downstream = threading.Thread(
            target=self._pump,
            args=("a2c", agent_out.fileno(), self.stdout_fd, close_our_stdout, "proxy stdout"),
            name="acp-proxy-a2c",
            daemon=True,
        )
        upstream.start()
        downstream.start()
        try:
            code = proc.wait()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        downstream.join(DRAIN_AFTER_EXIT)
        if downstream.is_alive():
            self.monitor.notes.append(
                "the agent's stdout stayed open after it exited (a child process holds it); "
                "the proxy stopped relaying it"
            )
        self._queue.put(None)
        judge.join()
        return RelayResult(
            128 - code if code < 0 else code, self.monitor, self.skipped, self.closed
        )

    def _forward_signals(self, proc: subprocess.Popen[bytes]) -> dict[signal.Signals, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}

        def forward(signum: int, _frame: object) -> None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signum)

        previous: dict[signal.Signals, Any] = {}
        for sig in FORWARDED_SIGNALS:
            previous[sig] = signal.signal(sig, forward)
        return previous


def run_relay(argv: list[str], monitor: LiveMonitor, log: TextIO | None = None) -> RelayResult:
    """Relay our stdio to ``argv`` until it exits; findings go to ``log`` (stderr)."""
    sys.setswitchinterval(0.0005)  # the judge thread must not hold up a waiting relay long
    return Relay(argv, monitor, log or sys.stderr).run()
