"""A whole session across two real processes: stream a turn, then reload it elsewhere
(SPEC §1 ordering, §2, §7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.llm_routes import STREAM, STREAMED_TEXT, STREAMED_THOUGHT
from tests.agent.process.stdio_harness import spawn

pytestmark = pytest.mark.subprocess

QUESTION = f"{STREAM} what does this module deploy?"


def chunk_text(updates: list[dict], kind: str) -> str:
    return "".join(
        u["update"]["content"]["text"] for u in updates if u["update"]["sessionUpdate"] == kind
    )


def test_a_session_streams_then_replays_in_a_new_process_then_closes_and_lists(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    with spawn(home, llm_server.url) as first:
        assert first.initialize()["agentCapabilities"]["loadSession"] is True
        session_id = first.new_session(workspace)
        prompt = first.reply(first.start_prompt(session_id, QUESTION))
        assert prompt.result["stopReason"] == "end_turn"
        assert chunk_text(prompt.updates, "agent_thought_chunk") == STREAMED_THOUGHT
        assert chunk_text(prompt.updates, "agent_message_chunk") == STREAMED_TEXT
        live_ids = {u["update"]["messageId"] for u in prompt.updates if "messageId" in u["update"]}
        assert len(live_ids) == 1
        first.close_stdin()
        assert first.wait_exit(timeout=120) == 0
        first.drain_until_eof()
        # Nothing of the turn was written after its response.
        late = [
            f
            for f in first.frames[prompt.index + 1 :]
            if f.get("method") == "session/update"
            and f["params"]["update"]["sessionUpdate"] != "available_commands_update"
        ]
        assert late == []
        assert first.all_stdout_is_json()

    with spawn(home, llm_server.url) as second:
        second.initialize()
        load = second.load(session_id, workspace)
        assert "result" in load.frame
        # Every replayed update, and then the command list, precedes the load response.
        assert load.kinds() == [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "available_commands_update",
        ]
        assert load.updates[0]["update"]["content"]["text"] == QUESTION
        assert chunk_text(load.updates, "agent_thought_chunk") == STREAMED_THOUGHT
        assert chunk_text(load.updates, "agent_message_chunk") == STREAMED_TEXT
        assert {load.updates[2]["update"]["messageId"]} == live_ids

        assert second.call("session/close", {"sessionId": session_id}).result == {}
        after_close = second.reply(second.start_prompt(session_id, "still there?"))
        assert after_close.error["data"] == {"sessionId": "unknown session"}

        listed = second.call("session/list", {"cwd": str(workspace)}).result["sessions"]
        second.close_stdin()
        assert second.wait_exit(timeout=120) == 0
        assert second.all_stdout_is_json()
    assert [s["sessionId"] for s in listed] == [session_id]
    assert listed[0]["title"] == QUESTION
    assert listed[0]["cwd"] == str(workspace)
