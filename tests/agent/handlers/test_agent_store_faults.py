"""A session whose storage breaks under it keeps answering (SPEC §12 read-only / failing disk)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.agent.handlers.agent_harness import open_agent

pytestmark = pytest.mark.anyio


async def test_a_session_whose_directory_vanished_still_answers(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        shutil.rmtree(tmp_path / "home" / "sessions" / session_id)
        prompt = await client.prompt(session_id, "hello")
        mode = await client.call(
            "session/set_mode", {"sessionId": session_id, "modeId": "read_only"}
        )
        second = await client.prompt(session_id, "still here?")
        history = client.model_requests[-1].messages
    assert prompt.result["stopReason"] == "end_turn"
    assert mode.result == {}
    assert second.result["stopReason"] == "end_turn"
    # The conversation continues from memory even though nothing reached the disk.
    assert [m["role"] for m in history] == ["user", "assistant", "user"]


async def test_a_broken_event_log_does_not_affect_other_sessions(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        healthy = await client.new_session()
        broken = await client.new_session()
        log = tmp_path / "home" / "sessions" / broken / "events.jsonl"
        log.unlink()
        log.mkdir()  # appends now fail with an OS error (root ignores permission bits)
        failed_disk = await client.prompt(broken, "this is not persisted")
        fine = await client.prompt(healthy, "this is persisted")
        await client.call("session/close", {"sessionId": healthy})
        replay = await client.load(healthy)
    assert failed_disk.result["stopReason"] == "end_turn"
    assert fine.result["stopReason"] == "end_turn"
    users = [
        u["update"] for u in replay.updates if u["update"]["sessionUpdate"] == "user_message_chunk"
    ]
    assert [u["content"]["text"] for u in users] == ["this is persisted"]
