""" "Always" answers for MCP tools follow the server, not its position in the list (item 12)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer
from acp_scripted_llm.script import Turn

from tests.agent.process.stdio_harness import BlockingAgent, agent_environment, run_agent

FAKE_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "fake_mcp_server.py"
pytestmark = pytest.mark.subprocess

# Two servers the client calls by the same name: the second gets the label ``fake_2``.
SERVER_A = {"name": "fake", "command": sys.executable, "args": [str(FAKE_SERVER)], "env": []}
SERVER_B = {**SERVER_A, "args": [str(FAKE_SERVER), "--page-size", "50"]}


def _prompt(agent: BlockingAgent, session_id: str, option_id: str) -> list[str]:
    """Run one prompt answering every permission with ``option_id``; the asked tool ids."""
    prompt_id = agent.start_prompt(session_id, "add")
    asked: list[str] = []
    position = len(agent.frames)
    while True:
        index = agent.wait_frame(
            lambda f: (
                f.get("method") == "session/request_permission"
                or (f.get("id") == prompt_id and "method" not in f)
            ),
            start=position,
        )
        frame: dict[str, Any] = agent.frames[index]
        position = index + 1
        if "method" not in frame:
            assert frame["result"]["stopReason"] == "end_turn", frame
            return asked
        asked.append(frame["params"]["toolCall"]["toolCallId"])
        outcome = {"outcome": "selected", "optionId": option_id}
        agent.send({"jsonrpc": "2.0", "id": frame["id"], "result": {"outcome": outcome}})


def test_allow_always_does_not_move_to_the_server_that_takes_the_label(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    add = {"a": 1, "b": 2}
    script = [
        Turn().tool_use("mcp__fake__add", add, id="first_a").stop("tool_use"),
        Turn().text("ok").stop("end_turn"),
        # Second process, servers listed the other way round: mcp__fake__ is now server B.
        Turn().tool_use("mcp__fake__add", add, id="now_b").stop("tool_use"),
        Turn().tool_use("mcp__fake_2__add", add, id="now_a").stop("tool_use"),
        Turn().text("ok").stop("end_turn"),
    ]
    with ScriptedLLMServer(script) as llm:
        env = agent_environment(tmp_path / "home", llm.url)
        with run_agent(env, stderr_path=tmp_path / "stderr1.txt") as agent:
            agent.initialize()
            new = {"cwd": str(workspace), "mcpServers": [SERVER_A, SERVER_B]}
            session_id = agent.call("session/new", new).result["sessionId"]
            assert _prompt(agent, session_id, "allow_always") == ["first_a"]
            agent.close_stdin()
            assert agent.wait_exit(timeout=120) == 0

        with run_agent(env, stderr_path=tmp_path / "stderr2.txt") as agent:
            agent.initialize()
            load = {
                "sessionId": session_id,
                "cwd": str(workspace),
                "mcpServers": [SERVER_B, SERVER_A],
            }
            agent.call("session/load", load)
            # B's add asks (A's "always" does not cover it); A's add, relabelled, does not.
            assert _prompt(agent, session_id, "reject_once") == ["now_b"]
            agent.close_stdin()
            assert agent.wait_exit(timeout=120) == 0
