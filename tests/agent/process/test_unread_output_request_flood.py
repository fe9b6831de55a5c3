"""Issue 34 item 7: a client that never reads its stdout and floods small requests. Each
answer is tiny, so the byte cap alone let 158,000 of them pile up (1.4 GiB); the agent now
stops reading input while too many frames are unwritten, and its peak memory (VmHWM, read
from /proc) stays bounded. Once the client reads again, every request is answered."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn

from tests.agent.process.stdio_harness import TIMEOUT, agent_environment
from tests.agent.process.test_integration_unread_output import (
    RawAgent,
    memory_mib,
    wait_until_idle_or_over,
)

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc"),
]

FLOOD = 60_000
#: Generous: 4096 parked answers and their tasks, a pipe's worth of read-ahead, the caches.
LIMIT_OVER_BASELINE_MIB = 150


def _flood_lines() -> bytes:
    return b"".join(
        json.dumps({"jsonrpc": "2.0", "id": 100 + n, "method": "session/list"}).encode() + b"\n"
        for n in range(FLOOD)
    )


def test_a_flood_of_small_requests_into_an_unread_stdout_is_bounded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with ScriptedLLMServer(Turn().text("unused").to_dict()) as llm:
        agent = RawAgent(agent_environment(home, llm.url), tmp_path / "stderr.txt")
        try:
            agent.send(1, "initialize", {"protocolVersion": 1})
            agent.answer(1)
            agent.send(2, "session/list", {})
            agent.answer(2)
            baseline = memory_mib(agent.proc.pid)["VmHWM"]
            assert agent.proc.stdin is not None
            stdin = agent.proc.stdin
            sent = threading.Event()

            def flood() -> None:
                try:
                    stdin.write(_flood_lines())  # blocks once the agent stops reading
                    stdin.flush()
                    sent.set()
                except (BrokenPipeError, ValueError, OSError):
                    pass  # the agent was stopped at the end of the test

            writer = threading.Thread(target=flood, daemon=True)
            writer.start()
            limit = baseline + LIMIT_OVER_BASELINE_MIB
            memory = wait_until_idle_or_over(agent.proc.pid, limit, 3 * TIMEOUT)
            assert memory["VmHWM"] <= limit, (
                f"VmHWM {memory['VmHWM']:.0f} MiB over {limit:.0f} MiB (baseline {baseline:.0f})"
            )
            assert not sent.is_set()  # the agent stopped reading: the flood is still queued

            # Reading again: the agent catches up and answers the very last request.
            last = agent.answer(100 + FLOOD - 1, limit_s=6 * TIMEOUT)
            assert last["result"]["sessions"] == []
            assert sent.wait(TIMEOUT)
        finally:
            agent.close()
