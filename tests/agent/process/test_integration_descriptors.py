"""Many idle sessions in a process allowed only 64 descriptors (issue 8, item 9)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from iac_code_dev.wire_client import agent_command

from tests.agent.process.stdio_harness import agent_environment, run_agent_command

pytestmark = pytest.mark.subprocess

DESCRIPTORS = 64
SESSIONS = 150  # before issue 8 every open session kept its lock file open


_LIMITED_EXEC = """
import os, resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
os.execv(sys.argv[2], sys.argv[2:])
"""


def test_idle_sessions_need_no_descriptor_each(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # The agent, with its descriptors limited before it starts (exec keeps the limit).
    command = [sys.executable, "-c", _LIMITED_EXEC, str(DESCRIPTORS), *agent_command()]
    with run_agent_command(
        command, env=agent_environment(tmp_path / "home", None), stderr_path=tmp_path / "stderr.txt"
    ) as agent:
        agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        ids = []
        for _ in range(SESSIONS):
            reply = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []})
            assert "result" in reply.frame, reply.frame
            ids.append(reply.frame["result"]["sessionId"])
        listed = agent.call("session/list", {})
        assert len(listed.frame["result"]["sessions"]) == 50  # first page
        for method in ("session/close", "session/load"):
            params = {"sessionId": ids[0], "cwd": str(workspace), "mcpServers": []}
            assert "result" in agent.call(method, params).frame
        fork = agent.call(
            "session/fork", {"sessionId": ids[1], "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in fork.frame, fork.frame
        agent.close_stdin()
        assert agent.wait_exit(timeout=120) == 0
