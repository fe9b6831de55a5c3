"""A client that stops reading stdout while the model streams: the agent's memory stays
bounded by the output backlog cap (``max_output_backlog_mib``), not by the turn's output."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn

from tests.agent.process.llm_routes import last_user_text
from tests.agent.process.stdio_harness import TIMEOUT, agent_environment

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc"),
]

MIB = 2**20
BACKLOG_MIB = 2
TEXT = "x" * (32 * MIB)  # streamed in deltas of 256 KiB: 128 frames of ~256 KiB
BIG = "BIG:"


def route(body: dict[str, Any]) -> Turn:
    if last_user_text(body).startswith(BIG):
        return Turn().text(TEXT, chunk_size=256 * 1024)
    return Turn().text("ok")


def memory_mib(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of ``pid`` in MiB."""
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0]) / 1024
    return values


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


class RawAgent:
    """``iac-code acp`` whose stdout the test reads only when it wants to."""

    def __init__(self, env: dict[str, str], stderr: Path) -> None:
        self._stderr = stderr.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "iac_code.cli", "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )
        self._buffer = b""

    def send(self, request_id: int, method: str, params: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id: int, limit_s: float = TIMEOUT) -> dict[str, Any]:
        """Read stdout (bounded) until the answer to ``request_id``."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + limit_s
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                frame = json.loads(line)
                if frame.get("id") == request_id and "method" not in frame:
                    return dict(frame)
            ready, _, _ = select.select([self.proc.stdout], [], [], deadline - time.monotonic())
            assert ready, f"no answer to request {request_id} within {limit_s} s"
            chunk = os.read(self.proc.stdout.fileno(), MIB)
            assert chunk, "the agent closed stdout"
            self._buffer += chunk

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)
        self._stderr.close()


def wait_until_idle_or_over(pid: int, limit_mib: float, limit_s: float) -> dict[str, float]:
    """Poll the agent until it has stopped using CPU for a second (it is waiting for the
    client to read) or its memory went over ``limit_mib``; its memory then."""
    deadline = time.monotonic() + limit_s
    last, unchanged = cpu_ticks(pid), 0
    while time.monotonic() < deadline:
        memory = memory_mib(pid)
        if memory["VmHWM"] > limit_mib or unchanged >= 10:
            return memory
        time.sleep(0.1)  # another process's progress: nothing to wait on but /proc
        ticks = cpu_ticks(pid)
        unchanged = unchanged + 1 if ticks == last else 0
        last = ticks
    raise AssertionError(f"the agent was still busy after {limit_s} s")


def test_an_unread_stdout_keeps_the_agents_memory_bounded_while_the_model_streams(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "config.toml").write_text(f"max_output_backlog_mib = {BACKLOG_MIB}\n")
    with ScriptedLLMServer(route) as llm:
        agent = RawAgent(agent_environment(home, llm.url), tmp_path / "stderr.txt")
        try:
            agent.send(1, "initialize", {"protocolVersion": 1})
            agent.answer(1)
            agent.send(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
            session_id = agent.answer(2)["result"]["sessionId"]
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "warm up"}]}
            agent.send(3, "session/prompt", prompt)  # loads the model SDK: the baseline
            assert agent.answer(3)["result"]["stopReason"] == "end_turn"
            baseline = memory_mib(agent.proc.pid)["VmHWM"]

            # Now the client stops reading while the model streams 32 MiB of text.
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": f"{BIG} go"}]}
            agent.send(4, "session/prompt", prompt)
            limit = baseline + 16 * BACKLOG_MIB + 16  # generous: the cap, a frame, the SDK
            memory = wait_until_idle_or_over(agent.proc.pid, limit, TIMEOUT)
            assert memory["VmHWM"] <= limit, (
                f"VmHWM {memory['VmHWM']:.0f} MiB over {limit:.0f} MiB"
                f" (baseline {baseline:.0f} MiB, backlog cap {BACKLOG_MIB} MiB)"
            )

            # The agent only waited: once the client reads again the turn completes.
            assert agent.answer(4)["result"]["stopReason"] == "end_turn"
            assert agent.proc.poll() is None
        finally:
            agent.close()
