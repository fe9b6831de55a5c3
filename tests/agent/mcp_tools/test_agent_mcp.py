"""MCP servers the client configures become tools of the session, and stop with it."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer
from acp_scripted_llm.script import Turn

from tests.agent.process.stdio_harness import agent_environment, run_agent

FAKE_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "fake_mcp_server.py"
pytestmark = pytest.mark.subprocess


def _processes_with(token: str) -> list[int]:
    """Pids whose environment carries ``token`` (the fake MCP servers of this test)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path("/proc", entry, "environ").read_bytes()
        except OSError:
            continue
        if token.encode() in environ:
            found.append(int(entry))
    return found


def test_an_mcp_tool_is_offered_asked_for_and_its_server_stopped(tmp_path: Path) -> None:
    token = f"MCP_TEST_{uuid.uuid4().hex}"
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = [
        Turn().tool_use("mcp__fake__add", {"a": 2, "b": 3}, id="toolu_mcp_add").stop("tool_use"),
        Turn().text("2 + 3 = 5").stop("end_turn"),
    ]
    server = {
        "name": "fake",
        "command": sys.executable,
        "args": [str(FAKE_SERVER)],
        "env": [{"name": "MCP_TEST_TOKEN", "value": token}],
    }
    with ScriptedLLMServer(script) as llm:
        env = agent_environment(tmp_path / "home", llm.url)
        with run_agent(env, stderr_path=tmp_path / "stderr.txt") as agent:
            agent.initialize()
            reply = agent.call("session/new", {"cwd": str(workspace), "mcpServers": [server]})
            session_id = reply.result["sessionId"]
            prompt_id = agent.start_request(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "add 2 and 3"}]},
            )
            asked = agent.wait_frame(lambda f: f.get("method") == "session/request_permission")
            permission = agent.frames[asked]
            assert permission["params"]["toolCall"]["toolCallId"] == "toolu_mcp_add"
            agent.send(
                {
                    "jsonrpc": "2.0",
                    "id": permission["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
                }
            )
            done = agent.reply(prompt_id)
            assert done.result["stopReason"] == "end_turn"
            finals = [
                u["update"]
                for u in done.updates
                if u["update"]["sessionUpdate"] == "tool_call_update"
                and u["update"].get("status") == "completed"
            ]
            assert finals and finals[0]["toolCallId"] == "toolu_mcp_add"
            assert _processes_with(token), "the MCP server should be running for the session"

            agent.call("session/close", {"sessionId": session_id})
            assert _processes_with(token) == []
            agent.close_stdin()
            assert agent.wait_exit() == 0

        first, second = llm.model_requests[0], llm.model_requests[1]
        assert "mcp__fake__add" in first.tool_names
        results = [
            block
            for message in second.messages
            for block in (message["content"] if isinstance(message["content"], list) else [])
            if block.get("type") == "tool_result"
        ]
        assert results[0]["tool_use_id"] == "toolu_mcp_add"
        assert "5" in str(results[0]["content"])
