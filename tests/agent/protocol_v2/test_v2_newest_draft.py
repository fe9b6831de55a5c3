"""What the newest v2 draft (npm SDK 2.4.0) adds, through a real ``iac-code acp`` process.

A failed turn ends idle with ``stopReason: "error"`` and its error object; the resume answer
lists the session's commands as the session/new answer does. Scripted model over HTTP; every
wait is bounded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.stdio_harness import spawn
from tests.agent.protocol_v2.v2_kit_support import MODEL_WAIT, is_idle, start_v2, v2_problems
from tests.agent.protocol_v2.v2_script import FAIL, RETRY

pytestmark = pytest.mark.subprocess


def test_a_failed_turn_ends_idle_with_the_error_stop_reason_and_its_error(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    prompt = [{"type": "text", "text": FAIL + " go"}]
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        answered = agent.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
        idle = agent.wait_frame(is_idle, start=answered.index, timeout=MODEL_WAIT)
        update = agent.frames[idle]["params"]["update"]
        # The session takes the next prompt: the failure ended the turn, not the session.
        again = agent.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
        problems = v2_problems(agent)
    assert "messageId" in answered.result  # accepted first, failed afterwards
    assert update["stopReason"] == "error"
    assert isinstance(update["error"]["code"], int) and update["error"]["message"]
    assert "messageId" in again.result
    assert problems == []


def test_the_resume_answer_lists_the_commands_as_session_new_does(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        new = agent.call("session/new", {"cwd": str(workspace)}).result
        agent.call("session/close", {"sessionId": new["sessionId"]})
        resumed = agent.call(
            "session/resume", {"sessionId": new["sessionId"], "cwd": str(workspace)}
        ).result
        problems = v2_problems(agent)
    assert resumed["availableCommands"] == new["availableCommands"]
    assert resumed["availableCommands"] and all(
        command["type"] == "command" for command in resumed["availableCommands"]
    )
    assert problems == []


def test_a_retried_model_request_is_announced_as_a_v2_notice(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path, tmp_path: Path
) -> None:
    # v2 has no capability for notices: every v2 client gets them as updates of their own.
    prompt = [{"type": "text", "text": f"{RETRY} {tmp_path.name}"}]
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        answered = agent.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
        idle = agent.wait_frame(is_idle, start=answered.index, timeout=MODEL_WAIT)
        updates = [
            frame["params"]["update"]
            for frame in agent.frames[answered.index : idle + 1]
            if isinstance(frame, dict) and frame.get("method") == "session/update"
        ]
        problems = v2_problems(agent)
    notices = [u for u in updates if u["sessionUpdate"] == "notice"]
    assert len(notices) == 1 and notices[0]["severity"] == "warning"
    assert "retrying" in notices[0]["description"]
    assert updates[-1]["stopReason"] == "end_turn"
    assert problems == []
