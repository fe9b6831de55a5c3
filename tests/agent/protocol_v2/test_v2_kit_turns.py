"""v2 turns as the official test kit drives them: cancel and close at any moment, the echo.

The kit cancels (or closes) a moment after ``running``, while a fresh agent is still
importing the model SDK and the v1 turn does not exist yet; these tests do the same by
sending the cancel as soon as the prompt is answered. Real ``iac-code acp`` subprocess,
scripted model over HTTP; every wait is bounded.
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
    is_state,
    session_updates,
    start_v2,
    update_of,
    v2_problems,
)
from tests.agent.protocol_v2.v2_script import SLOW

pytestmark = pytest.mark.subprocess


def _slow_prompt(session_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": SLOW + " go"}]}


def _nothing_after(agent: BlockingAgent, index: int, session_id: str) -> list[dict[str, Any]]:
    """Updates for ``session_id`` after frame ``index``, once a round trip has flushed them."""
    barrier = agent.call("session/list", {}).index
    return [u for i, u in session_updates(agent.frames[:barrier], session_id) if i > index]


def test_a_cancel_sent_right_after_the_answer_ends_the_turn_cancelled(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        answered = agent.call("session/prompt", _slow_prompt(session_id))
        assert answered.result["messageId"]
        agent.notify("session/cancel", {"sessionId": session_id})
        idle = agent.wait_frame(is_idle, start=answered.index, timeout=MODEL_WAIT)
        stop = agent.frames[idle]["params"]["update"].get("stopReason")
        late = _nothing_after(agent, idle, session_id)
        chunks = [
            u
            for _, u in session_updates(agent.frames[:idle], session_id)
            if u["sessionUpdate"] == "agent_message_chunk"
        ]
        problems = v2_problems(agent)
    assert stop == "cancelled"
    assert late == []  # every update of the cancelled work came before the idle
    assert len(chunks) < 200  # the slow answer was not streamed to its end
    assert problems == []


@pytest.mark.parametrize("moment", ["at running", "while streaming"])
def test_close_with_a_turn_in_flight_cancels_it_before_answering(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path, moment: str
) -> None:
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        answered = agent.call("session/prompt", _slow_prompt(session_id))
        if moment == "at running":
            agent.wait_frame(lambda f: is_state(f, "running"), start=answered.index)
        else:
            agent.wait_update("agent_message_chunk", start=answered.index, timeout=MODEL_WAIT)
        closed = agent.call("session/close", {"sessionId": session_id}, timeout=MODEL_WAIT)
        idles = [i for i, f in enumerate(agent.frames[: closed.index]) if is_idle(f)]
        idle_update = update_of(agent.frames[idles[-1]]) if idles else None
        late = _nothing_after(agent, closed.index, session_id)
        # The session is free: it can be resumed and prompted again.
        resumed = agent.call("session/resume", {"sessionId": session_id, "cwd": str(workspace)})
        problems = v2_problems(agent)
    assert closed.result == {}
    assert idle_update is not None, "no idle before the close answer"
    assert idle_update.get("stopReason") == "cancelled"
    assert "error" not in idle_update
    assert late == []
    assert "result" in resumed.frame
    assert problems == []


def test_the_inserted_user_message_is_echoed_with_the_answered_message_id(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    prompt = [{"type": "text", "text": "hello there"}]
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        answered = agent.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
        message_id = answered.result["messageId"]
        idle = agent.wait_frame(is_idle, start=answered.index, timeout=MODEL_WAIT)
        during = [
            u for i, u in session_updates(agent.frames[:idle], session_id) if i > answered.index
        ]
        problems = v2_problems(agent)
    echoes = [
        u
        for u in during
        if u["sessionUpdate"] in ("user_message", "user_message_chunk")
        and u.get("messageId") == message_id
    ]
    assert echoes, f"no echo of {message_id} among {[u['sessionUpdate'] for u in during]}"
    assert echoes[0]["sessionUpdate"] == "user_message"
    assert echoes[0]["content"] == prompt
    assert problems == []
