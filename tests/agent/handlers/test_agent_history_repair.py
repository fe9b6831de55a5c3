"""History consistency on load: orphaned tool_use blocks anywhere get results (SPEC §4.3)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from iac_code.store import SessionStore, new_session_id

from tests.agent.handlers.agent_harness import open_agent, read_events

pytestmark = pytest.mark.anyio


def user(message_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "user_message",
        "messageId": message_id,
        "content": [{"type": "text", "text": text}],
    }


def assistant(message_id: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "assistant_message",
        "messageId": message_id,
        "blocks": list(blocks),
        "stopReason": "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn",
    }


def tool_use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "read_file", "input": {"path": "main.tf"}}


def write_session_with_orphan_in_the_middle(home: Path, cwd: Path) -> str:
    store = SessionStore(home)
    session_id = new_session_id()
    store.create(session_id, str(cwd))
    store.append_many(
        session_id,
        [
            user("u1", "read main.tf"),
            assistant("a1", {"type": "text", "text": "Reading it."}, tool_use("toolu_orphan")),
            # The process died here: no tool_result for toolu_orphan was ever written.
            user("u2", "what did you find?"),
            assistant("a2", {"type": "text", "text": "I could not finish reading."}),
        ],
    )
    return session_id


def check_well_formed(messages: list[dict[str, Any]]) -> None:
    """Roles alternate and each tool_use is answered in the very next (user) message."""
    roles = [m["role"] for m in messages]
    assert roles[0] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    for position, message in enumerate(messages):
        uses = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        if uses:
            following = messages[position + 1]["content"]
            answered = [b["tool_use_id"] for b in following if b.get("type") == "tool_result"]
            assert answered == uses


async def test_an_orphan_in_the_middle_is_repaired_on_load_and_on_disk(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "ws").mkdir()
    session_id = write_session_with_orphan_in_the_middle(home, tmp_path / "ws")
    async with open_agent(tmp_path, ["Here is the summary."]) as client:
        loaded = await client.load(session_id)
        assert "result" in loaded.frame
        reply = await client.prompt(session_id, "summarise")
        messages = client.model_requests[0].messages

    replay = [u["update"] for u in loaded.updates]
    final = [u for u in replay if u["sessionUpdate"] == "tool_call_update"]
    assert [(u["toolCallId"], u["status"]) for u in final] == [("toolu_orphan", "failed")]
    announced = [u["toolCallId"] for u in replay if u["sessionUpdate"] == "tool_call"]
    assert announced == ["toolu_orphan"]  # never an update for an unannounced tool call

    results = [e for e in read_events(home, session_id) if e["type"] == "tool_result"]
    assert len(results) == 1
    assert results[0]["toolCallId"] == "toolu_orphan"
    assert results[0]["isError"] is True
    assert "interrupted" in results[0]["modelContent"]

    assert reply.result["stopReason"] == "end_turn"
    check_well_formed(messages)
    assert messages[-1]["content"][-1] == {"type": "text", "text": "summarise"}


async def test_a_repaired_session_is_not_repaired_twice(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "ws").mkdir()
    session_id = write_session_with_orphan_in_the_middle(home, tmp_path / "ws")
    async with open_agent(tmp_path) as client:
        await client.load(session_id)
    async with open_agent(tmp_path) as again:
        await again.load(session_id)
    results = [e for e in read_events(home, session_id) if e["type"] == "tool_result"]
    assert len(results) == 1


async def test_a_call_announced_only_by_a_tool_call_event_is_closed_on_load(
    tmp_path: Path,
) -> None:
    # A sub-agent's nested call has no tool_use block in the main conversation.
    home = tmp_path / "home"
    (tmp_path / "ws").mkdir()
    store = SessionStore(home)
    session_id = new_session_id()
    store.create(session_id, str(tmp_path / "ws"))
    parent = {"iac_code": {"parentToolCallId": "toolu_agent"}}
    store.append_many(
        session_id,
        [
            user("u1", "delegate"),
            assistant("a1", tool_use("toolu_agent")),
            {"type": "tool_call", "toolCallId": "toolu_agent", "title": "Agent", "kind": "execute"},
            {
                "type": "tool_call",
                "toolCallId": "nested_write",
                "title": "Write b.tf",
                "kind": "edit",
                "_meta": parent,
            },
        ],
    )
    async with open_agent(tmp_path) as client:
        loaded = await client.load(session_id)
    replay = [u["update"] for u in loaded.updates]
    nested = [u for u in replay if u.get("toolCallId") == "nested_write"]
    assert [u["sessionUpdate"] for u in nested] == ["tool_call", "tool_call_update"]
    assert nested[0]["_meta"] == parent  # still shown inside its parent after a reload
    assert nested[1]["status"] == "failed"
    repaired = {
        e["toolCallId"] for e in read_events(home, session_id) if e["type"] == "tool_result"
    }
    assert repaired == {"toolu_agent", "nested_write"}
