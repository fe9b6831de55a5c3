"""kill -9 in the middle of a streamed reply loses no chunk the client saw (issue 37, 5a).

A real ``iac-code acp`` over stdio with the JSONL store streams a long reply slowly (the
``SLOW:`` route: 200 chunks); once the client has seen some chunks the process is killed
with SIGKILL, and a new process loads the session.
"""

from __future__ import annotations

import itertools
import signal
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.llm_routes import SLOW, last_user_text
from tests.agent.process.stdio_harness import spawn

pytestmark = pytest.mark.subprocess

SEEN_BEFORE_KILL = 12
FULL_REPLY = "tick " * 200  # what the SLOW route would stream if left alone


def message_chunks(notifications: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``agent_message_chunk`` updates among ``session/update`` params."""
    updates = [params["update"] for params in notifications]
    return [update for update in updates if update.get("sessionUpdate") == "agent_message_chunk"]


def update_params(frames: list[Any]) -> list[dict[str, Any]]:
    return [frame["params"] for frame in frames if frame.get("method") == "session/update"]


def test_kill_9_mid_stream_replays_every_chunk_the_client_saw_once(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    with spawn(home, llm_server.url) as agent:
        agent.initialize()
        session_id = agent.new_session(workspace)
        index = len(agent.frames)
        agent.start_prompt(session_id, f"{SLOW} stream for a while")
        for _ in range(SEEN_BEFORE_KILL):
            index = agent.wait_update("agent_message_chunk", start=index, timeout=120) + 1
        agent.signal(signal.SIGKILL)
        assert agent.wait_exit(timeout=120) == -signal.SIGKILL
        agent.drain_until_eof(timeout=120)
        seen = message_chunks(update_params(agent.frames))
    seen_text = "".join(chunk["content"]["text"] for chunk in seen)
    assert len(seen) >= SEEN_BEFORE_KILL
    assert seen_text != FULL_REPLY  # the kill really came mid-stream

    with spawn(home, llm_server.url) as again:
        again.initialize()
        replay = again.load(session_id, workspace)
        replayed = message_chunks(replay.updates)
        answer = again.reply(again.start_prompt(session_id, "after the crash"), timeout=120)
    replayed_text = "".join(chunk["content"]["text"] for chunk in replayed)
    # Everything the client saw, then at most what was stored but not yet relayed; nothing
    # twice (the whole replay is a prefix of the reply the model was streaming).
    assert replayed_text.startswith(seen_text)
    assert FULL_REPLY.startswith(replayed_text)
    assert {chunk["messageId"] for chunk in replayed} == {seen[0]["messageId"]}
    assert len(replayed) == 1  # rebuilt once, as one message

    assert answer.result["stopReason"] == "end_turn"
    request = next(
        r for r in llm_server.model_requests if last_user_text(r.body) == "after the crash"
    )
    roles = [m["role"] for m in request.messages]
    assert roles == ["user", "assistant", "user"]
    assert all(a != b for a, b in itertools.pairwise(roles))
    cut_short = request.messages[1]["content"]
    assert cut_short[0] == {"type": "text", "text": replayed_text}
