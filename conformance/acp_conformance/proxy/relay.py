"""The byte relay between the editor (our stdin/stdout) and the agent process.

One thread per direction copies whatever ``os.read`` returns straight to the other side
with ``os.write``, untouched, after queueing a copy for the judge (a separate, lower
priority process, see `judge`), which a feeder thread passes on — while the session
streams it holds them until a short quiet moment (or a large backlog), so the judge works
in the pauses. So judging can fall behind but never delays, reorders or re-encodes a byte.
The agent inherits our stderr (its logs pass through as they are); findings go to stderr as
whole lines, or to ``--log``.

Pipes may close at any moment on either side: a side that stopped reading is drained
(and its traffic still judged) so the other never blocks; our stdin's EOF becomes the
agent's, the agent's stdout EOF becomes ours. SIGTERM, SIGINT and SIGHUP are passed to the
agent's process group (it has its own, so a terminal's Ctrl-C reaches it once), and the
proxy exits with the agent's exit code (128+N for a signal N).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..harness.recorder import Direction
from ..v2_drafts import NEWEST
from .judge import record

CHUNK = 64 * 1024
#: Bytes the judge may lag behind before chunks are skipped (and counted) instead of queued.
JUDGE_BACKLOG = 64 * 1024 * 1024
#: The judge is fed while traffic flows only once this much waits for it; below that, the
#: feeder holds the copies until the session has been quiet for `JUDGE_QUIET` seconds.
#: Judging costs several times what relaying does, and on a small machine a judge working
#: beside a busy editor and agent took the CPU they needed (a 50k-chunk turn relayed at
#: 0.2x a direct pipe); sessions are bursty, so the judge catches up in the pauses.
JUDGE_BUSY_BACKLOG = JUDGE_BACKLOG // 2
JUDGE_QUIET = 0.05
#: How long the agent's stdout may stay open after the agent exited (a child holding it).
DRAIN_AFTER_EXIT = 5.0
#: How long the proxy waits for its judge after the agent exited (``--judge-wait``). The
#: proxy's exit is the agent's, as an editor sees it: past this wait it exits with the
#: agent's code at once, and the judge finishes the reports in the background (what it had
#: not read yet is handed over in a file, see `Relay._feed`).
JUDGE_WAIT = 3.0
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _start_in_own_session(
    argv: list[str], stdout: int, failure: str
) -> subprocess.Popen[bytes] | None:
    """Start ``argv`` with an unbuffered stdin pipe, in a session (and process group) of its
    own so that only the proxy decides which signals reach it; None, with ``failure`` and
    the reason on stderr, when it cannot start."""
    try:
        return subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=stdout, bufsize=0, start_new_session=True
        )
    except OSError as exc:
        print(f"acp-conformance proxy: {failure}: {exc}", file=sys.stderr)
        return None


@dataclass
class ProxyOptions:
    report_json: Path | None = None
    html: Path | None = None
    log: Path | None = None
    profile: str = "acp"
    #: ``--v2-draft``: the draft a v2 session is graded as (see ``acp_conformance.v2_drafts``).
    v2_draft: str = NEWEST
    judge_wait: float = JUDGE_WAIT


@dataclass
class RelayResult:
    exit_code: int
    skipped_bytes: int = 0
    closed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Relay:
    def __init__(
        self, argv: list[str], options: ProxyOptions, *, stdin_fd: int = 0, stdout_fd: int = 1
    ) -> None:
        self.argv = argv
        self.options = options
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.started = time.time()
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._backlog = 0
        self._backlog_lock = threading.Lock()
        #: When the last chunk went through (either way), for the feeder's quiet wait.
        self._last_traffic = time.monotonic()
        self._ended = threading.Event()
        self.skipped = 0
        self.closed: list[str] = []
        self.notes: list[str] = []
        #: Set when the judge is to finish in the background: the feeder writes what the
        #: judge has not read to `spill` instead of the pipe.
        self._handoff = threading.Event()
        self.spill = Path(tempfile.gettempdir()) / f"acp-proxy-{os.getpid()}-{uuid.uuid4().hex}"

    # -- the judge ----------------------------------------------------------------------

    def _start_judge(self) -> subprocess.Popen[bytes] | None:
        opts = self.options
        argv = [sys.executable, "-m", "acp_conformance.proxy.judge"]
        argv += ["--agent-json", json.dumps(self.argv), "--profile", opts.profile]
        argv += ["--v2-draft", opts.v2_draft]
        for flag, path in (("--report-json", opts.report_json), ("--html", opts.html)):
            if path is not None:
                argv += [flag, str(path)]
        if opts.log is not None:
            argv += ["--log", str(opts.log)]
        argv += ["--spill", str(self.spill)]
        # Its own session: a terminal's Ctrl-C must not stop it before the reports. Not our
        # stdout: the editor must see EOF when the agent closes it, not when the judge is done.
        return _start_in_own_session(argv, subprocess.DEVNULL, "no judge, relaying only")

    def _feed(self, judge: IO[bytes]) -> None:
        """Pass queued copies to the judge; if it is gone, keep draining the queue. Once
        `_handoff` is set, the rest (of the record being written too) goes to `spill`, which
        the judge reads after the pipe's end: the pipe is written without blocking, so a
        judge that is behind never holds the proxy's exit."""
        alive = True
        fd = judge.fileno()
        os.set_blocking(fd, False)
        while (item := self._queue.get()) is not None:
            self._wait_for_quiet()
            with self._backlog_lock:
                self._backlog -= len(item) - 6
            if alive:
                try:
                    rest = self._write_until_handoff(fd, item)
                except (OSError, ValueError):
                    alive = False
                    continue
                if rest is not None:
                    self._spill_rest(rest)
                    return

    def _write_until_handoff(self, fd: int, data: bytes) -> bytes | None:
        """Write ``data`` to the judge's pipe; what is left unwritten at the hand-off."""
        view = memoryview(data)
        while view:
            if self._handoff.is_set():
                return bytes(view)
            select.select([], [fd], [], JUDGE_QUIET)
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                continue
        return None

    def _spill_rest(self, first: bytes) -> None:
        """Everything the judge has not read, from ``first`` on, into `spill` (complete
        before the judge can see it: written aside, then renamed)."""
        partial = self.spill.with_suffix(".part")
        with partial.open("wb") as out:
            out.write(first)
            while (item := self._queue.get()) is not None:
                out.write(item)
        os.replace(partial, self.spill)

    def _wait_for_quiet(self) -> None:
        """Hold the judge back while the session streams, unless its backlog grows large."""
        while not self._ended.is_set() and self._backlog < JUDGE_BUSY_BACKLOG:
            quiet_for = time.monotonic() - self._last_traffic
            if quiet_for >= JUDGE_QUIET:
                return
            self._ended.wait(JUDGE_QUIET - quiet_for)

    def _enqueue(self, direction: Direction, data: bytes, kind: bytes = b"d") -> None:
        """Queue a copy for the judge; past the backlog bound the copy is dropped instead."""
        with self._backlog_lock:
            if kind == b"d" and self._backlog + len(data) > JUDGE_BACKLOG:
                self.skipped += len(data)
                data, kind = b"", b"s"
            self._backlog += len(data)
        self._queue.put(record(direction, kind, data))

    # -- relaying -----------------------------------------------------------------------

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
            self._last_traffic = time.monotonic()
            self._enqueue(direction, data)
            if target_open:
                try:
                    _write_all(target, data)
                except OSError:
                    target_open = False  # the reader went away: keep draining, keep judging
                    self.closed.append(name)
        self._enqueue(direction, b"", b"e")
        on_eof()

    def run(self) -> RelayResult:
        proc = _start_in_own_session(self.argv, subprocess.PIPE, f"cannot start {self.argv[0]}")
        if proc is None:
            return RelayResult(127)
        assert proc.stdin is not None and proc.stdout is not None
        agent_in, agent_out = proc.stdin, proc.stdout
        previous = self._forward_signals(proc)
        judge = self._start_judge()
        feeder = None
        if judge is not None and judge.stdin is not None:
            feeder = threading.Thread(
                target=self._feed, args=(judge.stdin,), name="acp-proxy-feed", daemon=True
            )
            feeder.start()

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
            self.notes.append(
                "the agent's stdout stayed open after it exited (a child process holds it); "
                "the proxy stopped relaying it"
            )
        exit_code = 128 - code if code < 0 else code  # killed by signal N: 128+N, as shells do
        result = RelayResult(exit_code, self.skipped, self.closed, self.notes)
        self._finish_judge(judge, feeder, result)
        return result

    def _finish_judge(
        self,
        judge: subprocess.Popen[bytes] | None,
        feeder: threading.Thread | None,
        result: RelayResult,
    ) -> None:
        if judge is None or judge.stdin is None or feeder is None:
            return
        if result.skipped_bytes:
            result.notes.append(
                f"the judge fell {JUDGE_BACKLOG} bytes behind and skipped "
                f"{result.skipped_bytes} bytes (all of them were relayed)"
            )
        outcome = {
            "exitCode": result.exit_code,
            "closed": result.closed,
            "skipped": result.skipped_bytes,
            "notes": result.notes,
            "started": self.started,
        }
        self._queue.put(record("c2a", b"x", json.dumps(outcome).encode()))
        self._queue.put(None)
        self._ended.set()  # the session is over: judge the rest at once
        deadline = time.monotonic() + self.options.judge_wait
        feeder.join(self.options.judge_wait)
        if feeder.is_alive():
            self._handoff.set()  # the rest goes to the spill file (a bounded disk write)
            feeder.join()
        with contextlib.suppress(OSError):
            judge.stdin.close()
        try:
            judge.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            where = ", ".join(str(p) for p in (self.options.report_json, self.options.html) if p)
            print(
                f"acp-conformance proxy: the judge (pid {judge.pid}) is finishing in the "
                f"background{'; it will write ' + where if where else ''}",
                file=sys.stderr,
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


def run_relay(argv: list[str], options: ProxyOptions) -> RelayResult:
    """Relay our stdio to ``argv`` until it exits, judged by a separate process."""
    return Relay(argv, options).run()
