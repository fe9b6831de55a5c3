"""A raw NDJSON client for ``iac-code acp`` running as a real subprocess.

Every stdout line is kept verbatim (:attr:`AgentProcess.raw_lines`) so tests can check that
stdout carries nothing but JSON-RPC frames. A reader thread feeds parsed frames into a queue;
every wait is bounded by a timeout and nothing sleeps.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Frame = dict[str, Any]
# Generous: the first prompt of a process imports the model SDK (~2 s of CPU, several times
# that while parallel test workers share two CPUs). Only a failing test ever waits this long.
TIMEOUT = 30.0
_process_numbers = itertools.count(1)


@dataclass
class Reply:
    frame: Frame
    updates: list[dict[str, Any]]  # session/update params between the request and its answer
    index: int

    @property
    def result(self) -> Any:
        assert "result" in self.frame, f"expected a result, got {self.frame}"
        return self.frame["result"]

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.frame, f"expected an error, got {self.frame}"
        return self.frame["error"]

    def kinds(self) -> list[str]:
        return [u["update"]["sessionUpdate"] for u in self.updates]


def agent_environment(
    home: Path, llm_url: str | None, *, api_key: str | None = "test-key"
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "IAC_CODE_"))}
    env["IAC_CODE_HOME"] = str(home)
    if llm_url is not None:
        env["ANTHROPIC_BASE_URL"] = llm_url
    if api_key is not None:
        env["ANTHROPIC_API_KEY"] = api_key
    return env


def write_fast_retry_config(home: Path) -> None:
    """Retries of transient model failures wait ~nothing, so fault tests stay fast."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("retry_base_delay = 0.001\n", encoding="utf-8")


class AgentProcess:
    """``python -m iac_code.cli acp`` with pipes; use as a context manager (always reaped)."""

    def __init__(self, env: Mapping[str, str], *args: str, stderr_path: Path) -> None:
        self._stderr = stderr_path.open("wb")
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "iac_code.cli", "acp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(env),
        )
        self.raw_lines: list[bytes] = []
        self.frames: list[Frame] = []
        self._queue: queue.Queue[Frame | None] = queue.Queue()
        self._ids = itertools.count(1)
        self._sent_at: dict[Any, int] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ plumbing

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_lines.append(line)
            try:
                frame = json.loads(line)
            except ValueError:
                frame = {"__unparsable__": line.decode("utf-8", "replace")}
            self._queue.put(frame)
        self._queue.put(None)

    def _pull(self, timeout: float) -> Frame:
        frame = self._queue.get(timeout=timeout)
        if frame is None:
            self._queue.put(None)  # keep reporting EOF
            raise EOFError("the agent closed stdout")
        self.frames.append(frame)
        return frame

    def __enter__(self) -> AgentProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()

    @property
    def stderr_text(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    # ------------------------------------------------------------------ sending

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
        self.proc.stdin.flush()

    def send(self, message: Frame) -> None:
        if "id" in message and "method" in message:
            self._sent_at[message["id"]] = len(self.frames)
        self.send_raw(json.dumps(message).encode())

    def request(self, method: str, params: Any = None, *, request_id: Any = None) -> Any:
        request_id = next(self._ids) if request_id is None else request_id
        message: Frame = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def notify(self, method: str, params: Any = None) -> None:
        message: Frame = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def signal(self, signum: signal.Signals) -> None:
        self.proc.send_signal(signum)

    def wait_exit(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout=timeout)

    # ------------------------------------------------------------------ receiving

    def wait_for(
        self, predicate: Callable[[Frame], bool], *, start: int = 0, timeout: float = TIMEOUT
    ) -> int:
        position = start
        while True:
            while position < len(self.frames):
                if predicate(self.frames[position]):
                    return position
                position += 1
            self._pull(timeout)

    def reply(self, request_id: Any, *, timeout: float = TIMEOUT) -> Reply:
        start = self._sent_at.get(request_id, 0)
        index = self.wait_for(
            lambda f: f.get("id") == request_id and "method" not in f,
            start=start,
            timeout=timeout,
        )
        updates = [
            f["params"] for f in self.frames[start:index] if f.get("method") == "session/update"
        ]
        return Reply(self.frames[index], updates, index)

    def next_frame(self, *, timeout: float = TIMEOUT) -> Frame:
        """The next frame not yet seen by any wait (for answers with ``id: null``)."""
        return self._pull(timeout)

    def call(self, method: str, params: Any = None, *, timeout: float = TIMEOUT) -> Reply:
        return self.reply(self.request(method, params), timeout=timeout)

    def wait_update(self, kind: str, *, start: int = 0, timeout: float = TIMEOUT) -> int:
        return self.wait_for(
            lambda f: (
                f.get("method") == "session/update"
                and f["params"]["update"]["sessionUpdate"] == kind
            ),
            start=start,
            timeout=timeout,
        )

    def drain_until_eof(self, *, timeout: float = TIMEOUT) -> None:
        try:
            while True:
                self._pull(timeout)
        except EOFError:
            return

    # ------------------------------------------------------------------ shortcuts

    def initialize(self) -> Reply:
        return self.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    def new_session(self, cwd: Path) -> str:
        return str(
            self.call("session/new", {"cwd": str(cwd), "mcpServers": []}).result["sessionId"]
        )

    def prompt_id(self, session_id: str, text: str) -> Any:
        return self.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )

    def load(self, session_id: str, cwd: Path) -> Reply:
        return self.call(
            "session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
        )

    def all_stdout_is_json(self) -> bool:
        return all(_is_json_object_line(line) for line in self.raw_lines)


def _is_json_object_line(line: bytes) -> bool:
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        return False
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


@contextmanager
def spawn(
    home: Path, llm_url: str | None, *args: str, api_key: str | None = "test-key"
) -> Iterator[AgentProcess]:
    """Start an agent with its state in ``home`` talking to ``llm_url``; reap it afterwards."""
    write_fast_retry_config(home)
    env = agent_environment(home, llm_url, api_key=api_key)
    stderr_path = home / f"stderr-{next(_process_numbers)}.log"
    with AgentProcess(env, *args, stderr_path=stderr_path) as agent:
        yield agent
