"""Many idle sessions in a process allowed only 64 descriptors (issue 8, item 9)."""

from __future__ import annotations

import json
import os
import resource
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.agent.process.stdio_harness import agent_environment

pytestmark = pytest.mark.subprocess

DESCRIPTORS = 64
SESSIONS = 150  # before issue 8 every open session kept its lock file open


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))


class LineClient:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._buffer = b""
        self._ids = 0

    def call(self, method: str, params: Any, timeout: float = 20.0) -> dict[str, Any]:
        self._ids += 1
        request_id = self._ids
        assert self.process.stdin is not None
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            frame = self._next_frame(deadline)
            if frame.get("id") == request_id and "method" not in frame:
                return frame

    def _next_frame(self, deadline: float) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    raise AssertionError("the agent did not answer in time")
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise AssertionError("the agent closed its output")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        frame: dict[str, Any] = json.loads(line)
        return frame


def test_idle_sessions_need_no_descriptor_each(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    stderr = (tmp_path / "stderr.txt").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "iac_code.cli", "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=agent_environment(tmp_path / "home", None),
        preexec_fn=_limit_descriptors,
    )
    try:
        client = LineClient(process)
        client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        ids = []
        for _ in range(SESSIONS):
            reply = client.call("session/new", {"cwd": str(workspace), "mcpServers": []})
            assert "result" in reply, reply
            ids.append(reply["result"]["sessionId"])
        listed = client.call("session/list", {})
        assert len(listed["result"]["sessions"]) == 50  # first page
        for method in ("session/close", "session/load"):
            params = {"sessionId": ids[0], "cwd": str(workspace), "mcpServers": []}
            assert "result" in client.call(method, params)
        fork = client.call(
            "session/fork", {"sessionId": ids[1], "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in fork, fork
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        stderr.close()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
