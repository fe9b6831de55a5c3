"""A deliberately tiny NDJSON client for one agent subprocess, used only by the benchmarks.

It does not reuse :mod:`iac_code.rpc`: the point is to measure the real process over real
pipes, with as little client-side machinery as possible between the bytes and the clock.

A reader thread does nothing but ``os.read`` the agent's stdout, stamp each read with
``time.monotonic()`` and split it into lines; JSON parsing happens in the caller's thread,
so a slow parse never delays a timestamp and a full stdout pipe never blocks the agent
while the caller is still writing (no deadlock when many requests are sent at once).
Every wait has a deadline; a missed deadline or an early exit is a `HarnessError`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

_READ_SIZE = 1 << 20
_EXIT_GRACE_SECONDS = 2.0
_STDERR_TAIL_BYTES = 2000


class HarnessError(RuntimeError):
    """The agent under test misbehaved in a way that makes a measurement impossible."""


@dataclass(frozen=True, slots=True)
class Incoming:
    """One message from the agent and the monotonic time its bytes were read."""

    at: float
    message: dict[str, Any]

    @property
    def is_notification(self) -> bool:
        return "method" in self.message and "id" not in self.message

    @property
    def is_request(self) -> bool:
        return "method" in self.message and "id" in self.message

    @property
    def update(self) -> dict[str, Any] | None:
        """The ``update`` object of a ``session/update`` notification, else None."""
        if self.message.get("method") != "session/update":
            return None
        params = self.message.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        return update if isinstance(update, dict) else None


@dataclass(slots=True)
class Reply:
    """A request's round trip: when it was written, when its answer arrived, and what came
    in between (notifications, in order)."""

    sent: float
    received: float
    result: Any
    error: dict[str, Any] | None
    between: list[Incoming] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return self.received - self.sent


class AgentProcess:
    """One spawned agent in its own process group, spoken to over stdin/stdout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        stderr_path: Path,
    ) -> None:
        self.argv = list(argv)
        self._stderr_path = stderr_path
        self._stderr: IO[bytes] = open(stderr_path, "wb")  # noqa: SIM115 (closed in close())
        self._ids = itertools.count(1)
        self._inbox: queue.SimpleQueue[tuple[float, bytes] | None] = queue.SimpleQueue()
        self._eof = False
        self.spawned_at = time.monotonic()
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=dict(env),
                cwd=cwd,
                bufsize=0,
                start_new_session=True,  # own process group: close() kills the whole tree
            )
        except OSError as exc:
            self._stderr.close()
            raise HarnessError(f"cannot start {self.argv!r}: {exc}") from exc
        self._reader = threading.Thread(target=self._pump, name="bench-agent-reader", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    # -- wire ---------------------------------------------------------------------------

    def _pump(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        pending = b""
        while True:
            try:
                data = os.read(fd, _READ_SIZE)
            except OSError:
                break
            if not data:
                break
            now = time.monotonic()
            lines = (pending + data).split(b"\n")
            pending = lines.pop()
            for line in lines:
                if line.strip():
                    self._inbox.put((now, line))
        self._inbox.put(None)

    def new_id(self) -> int:
        return next(self._ids)

    def write(self, payload: bytes) -> float:
        """Write raw bytes; returns the monotonic time just before the write."""
        stdin = self._proc.stdin
        assert stdin is not None
        started = time.monotonic()
        try:
            stdin.write(payload)
        except OSError as exc:
            raise HarnessError(f"the agent closed its stdin: {exc}{self.stderr_tail()}") from exc
        return started

    def send(self, message: Mapping[str, Any]) -> float:
        return self.write(encode(message))

    def send_request(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> tuple[int, float]:
        request_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        return request_id, self.send(message)

    def next_message(self, deadline: float) -> Incoming:
        """The next message from the agent; answers agent→client requests automatically."""
        while True:
            remaining = deadline - time.monotonic()
            if self._eof or remaining <= 0:
                raise HarnessError(self._why_nothing_came())
            try:
                item = self._inbox.get(timeout=remaining)
            except queue.Empty:
                continue
            if item is None:
                self._eof = True
                continue
            at, line = item
            try:
                message = json.loads(line)
            except ValueError as exc:
                raise HarnessError(f"the agent wrote a non-JSON line: {line[:200]!r}") from exc
            if not isinstance(message, dict):
                raise HarnessError(f"the agent wrote a non-object message: {line[:200]!r}")
            incoming = Incoming(at, message)
            if incoming.is_request:
                self.send(_answer_agent_request(message))
            return incoming

    def wait_replies(self, sent: Mapping[int, float], timeout: float) -> dict[int, Reply]:
        """Answers to several requests sent at once, whatever order they come back in."""
        deadline = time.monotonic() + timeout
        replies: dict[int, Reply] = {}
        while len(replies) < len(sent):
            incoming = self.next_message(deadline)
            message = incoming.message
            request_id = message.get("id")
            if (
                "method" not in message
                and isinstance(request_id, int)
                and request_id in sent
                and request_id not in replies
            ):
                replies[request_id] = Reply(
                    sent[request_id], incoming.at, message.get("result"), message.get("error")
                )
        return replies

    def wait_reply(
        self,
        request_id: int,
        sent: float,
        timeout: float,
        *,
        keep: Callable[[Incoming], bool] | None = None,
    ) -> Reply:
        """Read until the answer to ``request_id``; ``keep`` selects what to keep in between
        (default: every notification)."""
        deadline = time.monotonic() + timeout
        between: list[Incoming] = []
        while True:
            incoming = self.next_message(deadline)
            message = incoming.message
            if "method" not in message and message.get("id") == request_id:
                error = message.get("error")
                return Reply(sent, incoming.at, message.get("result"), error, between)
            if incoming.is_notification and (keep is None or keep(incoming)):
                between.append(incoming)

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float = 10.0,
        keep: Callable[[Incoming], bool] | None = None,
    ) -> Reply:
        request_id, sent = self.send_request(method, params)
        return self.wait_reply(request_id, sent, timeout, keep=keep)

    def expect_result(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float = 10.0
    ) -> Reply:
        """`request` that treats a JSON-RPC error answer as a harness error."""
        reply = self.request(method, params, timeout=timeout)
        if reply.error is not None:
            raise HarnessError(f"{method} failed: {reply.error}")
        return reply

    def _why_nothing_came(self) -> str:
        code = self._proc.poll()
        if self._eof or code is not None:
            return f"the agent closed stdout (exit code {code}){self.stderr_tail()}"
        return f"timed out waiting for the agent{self.stderr_tail()}"

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError):
            self._stderr.flush()
            data = self._stderr_path.read_bytes()[-_STDERR_TAIL_BYTES:]
            if data.strip():
                return "\n--- agent stderr (tail) ---\n" + data.decode("utf-8", "replace")
        return ""

    # -- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Shutdown ladder: close stdin, then SIGTERM, then SIGKILL the process group."""
        with contextlib.suppress(OSError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=_EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGTERM)
            try:
                self._proc.wait(timeout=_EXIT_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self._proc.wait(timeout=_EXIT_GRACE_SECONDS)
        # Children the agent left behind in its group go too.
        self._signal_group(signal.SIGKILL)
        self._reader.join(timeout=_EXIT_GRACE_SECONDS)
        with contextlib.suppress(OSError):
            if self._proc.stdout is not None:
                self._proc.stdout.close()
        self._stderr.close()

    def _signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signum)

    def __enter__(self) -> AgentProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def encode(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"


def _answer_agent_request(message: Mapping[str, Any]) -> dict[str, Any]:
    """The bench client advertises no capabilities: it allows permission requests once (so
    a tool benchmark is not stalled by an ask) and refuses anything else."""
    if message.get("method") == "session/request_permission":
        params = message.get("params")
        options = params.get("options") if isinstance(params, dict) else None
        for option in options if isinstance(options, list) else []:
            if isinstance(option, dict) and option.get("kind") == "allow_once":
                outcome = {"outcome": "selected", "optionId": option.get("optionId")}
                return {"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}}
    return {
        "jsonrpc": "2.0",
        "id": message["id"],
        "error": {"code": -32601, "message": "not supported by the bench client"},
    }
