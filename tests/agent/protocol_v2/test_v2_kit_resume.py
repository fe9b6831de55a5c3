"""v2 resume as the official test kit judges it: nothing after the answer, messages whole first.

A real ``iac-code acp`` subprocess writes a session with one turn; a second one resumes it,
with and without a replay. Every wait is bounded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.stdio_harness import BlockingAgent, spawn
from tests.agent.protocol_v2.v2_kit_support import (
    MODEL_WAIT,
    is_idle,
    session_updates,
    start_v2,
    v2_problems,
)

pytestmark = pytest.mark.subprocess

_WHOLE = {
    "user_message_chunk": "user_message",
    "agent_message_chunk": "agent_message",
    "agent_thought_chunk": "agent_thought",
}


def _session_with_one_turn(home: Path, url: str, workspace: Path) -> str:
    with spawn(home, url) as agent:
        start_v2(agent)
        session_id = str(agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"])
        answered = agent.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]},
        )
        agent.wait_frame(is_idle, start=answered.index, timeout=MODEL_WAIT)
    return session_id


def _resume(agent: BlockingAgent, session_id: str, workspace: Path, replay: bool) -> Any:
    params: dict[str, Any] = {"sessionId": session_id, "cwd": str(workspace)}
    if replay:
        params["replayFrom"] = {"type": "start"}
    return agent.call("session/resume", params)


@pytest.mark.parametrize("replay", [True, False], ids=["replay from start", "plain"])
def test_every_update_of_a_resume_comes_before_its_answer(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path, replay: bool
) -> None:
    session_id = _session_with_one_turn(home, llm_server.url, workspace)
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        resumed = _resume(agent, session_id, workspace, replay)
        barrier = agent.call("session/list", {}).index
        after = [
            u["sessionUpdate"]
            for i, u in session_updates(agent.frames[:barrier], session_id)
            if i > resumed.index
        ]
        problems = v2_problems(agent)
    assert "result" in resumed.frame
    assert after == []
    assert "available_commands_update" in resumed.kinds()
    assert problems == []


def test_a_replay_introduces_each_message_whole_before_its_chunks(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    session_id = _session_with_one_turn(home, llm_server.url, workspace)
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        resumed = _resume(agent, session_id, workspace, replay=True)
        problems = v2_problems(agent)
    replayed = [u["update"] for u in resumed.updates]
    chunks = [u for u in replayed if u["sessionUpdate"] in _WHOLE]
    assert {u["sessionUpdate"] for u in chunks} >= {"user_message_chunk", "agent_message_chunk"}
    introduced: dict[str, int] = {}
    for position, update in enumerate(replayed):
        if update["sessionUpdate"] in _WHOLE.values():
            introduced.setdefault(update["messageId"], position)
            assert update["content"] == []
    for position, update in enumerate(replayed):
        if update["sessionUpdate"] in _WHOLE:
            first = introduced.get(update["messageId"])
            assert first is not None and first < position, update
            assert replayed[first]["sessionUpdate"] == _WHOLE[update["sessionUpdate"]]
    assert problems == []
