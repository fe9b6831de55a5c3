"""v2 ``tool_call/cancel`` and ``terminal/cancel`` through a real ``iac-code acp`` process.

A ``bash`` call is stopped on its own: its whole process tree ends, its final update says
``cancelled``, and the turn goes on (the model gets the result and answers). Every wait is
bounded; the scripted model runs over HTTP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.stdio_harness import allow_permission, spawn
from tests.agent.protocol_v2.v2_kit_support import (
    MODEL_WAIT,
    is_idle,
    session_updates,
    start_v2,
    v2_problems,
)
from tests.agent.protocol_v2.v2_script import FINAL_TEXT, LONG_BASH
from tests.agent.turn_tools.agent_tools_kit import pid_alive, wait_for_file

pytestmark = pytest.mark.subprocess

CALL_ID = "long_bash"


def _pid_from(path: Path) -> int:
    return int(anyio.run(wait_for_file, path, MODEL_WAIT))


def _call_updates(frames: list[Any], session_id: str) -> list[dict[str, Any]]:
    return [
        u
        for _, u in session_updates(frames, session_id)
        if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == CALL_ID
    ]


def test_tool_call_cancel_stops_one_bash_call_and_the_turn_goes_on(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    prompt = {"type": "text", "text": LONG_BASH + " run it"}
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        answered = agent.call("session/prompt", {"sessionId": session_id, "prompt": [prompt]})
        allow_permission(agent, answered.index, timeout=MODEL_WAIT)
        shell_pid = _pid_from(workspace / "shell.pid")
        sleep_pid = _pid_from(workspace / "sleep.pid")
        running = _call_updates(agent.frames, session_id)
        stopped = agent.call("tool_call/cancel", {"sessionId": session_id, "toolCallId": CALL_ID})
        idle = agent.wait_frame(is_idle, start=answered.index, timeout=MODEL_WAIT)
        idle_update = agent.frames[idle]["params"]["update"]
        updates = _call_updates(agent.frames[:idle], session_id)
        text = "".join(
            u["content"]["text"]
            for _, u in session_updates(agent.frames[:idle], session_id)
            if u["sessionUpdate"] == "agent_message_chunk"
        )
        again = agent.call("tool_call/cancel", {"sessionId": session_id, "toolCallId": CALL_ID})
        problems = v2_problems(agent)
        # The call's final update is sent once its process group is gone.
        shell_gone, sleep_gone = not pid_alive(shell_pid), not pid_alive(sleep_pid)
    in_progress = next(u for u in running if u.get("status") == "in_progress")
    assert in_progress["capabilities"] == {"cancel": {}}
    assert stopped.result == {}
    final = updates[-1]
    assert final["status"] == "cancelled" and final["capabilities"] == {}
    assert shell_gone and sleep_gone  # the whole process tree, the background sleep too
    # The turn went on: the model got the stopped result and answered; the turn ended normally.
    assert idle_update["stopReason"] == "end_turn"
    assert FINAL_TEXT in text
    llm_request = llm_server.model_requests[-1]
    assert "stopped" in str(llm_request.body["messages"][-1]["content"])
    # Once ended, the call is no longer running: a second cancel names it.
    assert again.error["code"] == -32002 and again.error["data"] == {"toolCallId": CALL_ID}
    assert problems == []


def test_cancel_requests_for_unknown_things_get_clear_errors(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        no_call = agent.call("tool_call/cancel", {"sessionId": session_id, "toolCallId": "nope"})
        no_session = agent.call("tool_call/cancel", {"sessionId": "nope", "toolCallId": "x"})
        no_terminal = agent.call("terminal/cancel", {"sessionId": session_id, "terminalId": "t1"})
        bad = agent.call("tool_call/cancel", {"sessionId": session_id})
        alive = agent.call("session/list", {})
    assert no_call.error["code"] == -32002 and no_call.error["data"] == {"toolCallId": "nope"}
    assert no_session.error["code"] == -32002
    assert no_session.error["data"] == {"sessionId": "nope"}
    assert no_terminal.error["code"] == -32002
    assert no_terminal.error["data"] == {"terminalId": "t1"}
    assert bad.error["code"] == -32602
    assert "result" in alive.frame  # the process stays up
