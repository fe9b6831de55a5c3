"""A real ``iac-code acp`` process leaves no process of a ``bash`` call behind when it exits
mid-call — not even a job that ``set -m`` moved into a process group of its own."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.llm_routes import BASH
from tests.agent.process.stdio_harness import TIMEOUT, allow_permission, spawn

pytestmark = pytest.mark.subprocess


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait(condition: Callable[[], object], limit_s: float) -> bool:
    """Poll ``condition()`` (another process changes what it reads) for up to ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def test_the_agent_exiting_mid_call_stops_a_job_control_background_job(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    pid_file = workspace / "bg.pid"
    with spawn(home, llm_server.url) as agent:
        agent.initialize()
        session_id = agent.new_session(workspace)
        start = len(agent.frames)
        agent.start_prompt(session_id, f"{BASH} set -m; sleep 300 & echo $! > {pid_file}; wait")
        allow_permission(agent, start)
        assert _wait(lambda: pid_file.exists() and pid_file.read_text().strip(), TIMEOUT)
        pid = int(pid_file.read_text())
        try:
            assert _alive(pid)
            agent.close_stdin()
            assert agent.wait_exit(timeout=TIMEOUT) == 0
            assert _wait(lambda: not _alive(pid), 5), f"the background job {pid} outlived the agent"
        finally:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
