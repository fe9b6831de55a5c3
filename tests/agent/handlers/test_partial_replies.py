"""The replay rules of write-ahead ``partial_reply`` events (issue 37, item 5a).

A reply with a stored end ignores its partials; a reply with only partials (the process died
mid-stream) is rebuilt once, where it began; logs without partials replay as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from iac_code.agent.history import model_messages, replay_updates
from iac_code.agent.partial_replies import (
    MAX_JOINED_CHARS,
    extend_partial,
    partial_event,
    unfinished_replies,
)

from tests.agent.handlers.agent_harness import StallingModelClient, open_agent, read_events

USER = {"type": "user_message", "messageId": "u1", "content": [{"type": "text", "text": "plan"}]}


def final(message_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "assistant_message",
        "messageId": message_id,
        "blocks": [{"type": "text", "text": text}],
        "stopReason": "end_turn",
        **extra,
    }


def replayed(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (update["sessionUpdate"], update["content"]["text"])
        for update in replay_updates(events)
        if update["sessionUpdate"] != "user_message_chunk"
    ]


def test_a_reply_with_only_partials_is_replayed_once_as_the_agents_message() -> None:
    events = [USER, partial_event("m1", "text", "Creating "), partial_event("m1", "text", "a VPC")]
    assert replayed(events) == [("agent_message_chunk", "Creating a VPC")]
    updates = list(replay_updates(events))
    assert updates[-1]["messageId"] == "m1"


def test_partials_are_skipped_when_the_final_message_exists() -> None:
    events = [
        USER,
        partial_event("m1", "text", "Creating "),
        partial_event("m1", "text", "a VPC"),
        final("m1", "Creating a VPC."),
    ]
    assert replayed(events) == [("agent_message_chunk", "Creating a VPC.")]
    assert unfinished_replies(events) == {}


def test_several_partials_keep_their_order_and_kinds() -> None:
    events = [
        USER,
        partial_event("m1", "thinking", "Which "),
        partial_event("m1", "thinking", "region?"),
        partial_event("m1", "text", "Using "),
        partial_event("m1", "text", "eu-west-1"),
    ]
    assert replayed(events) == [
        ("agent_thought_chunk", "Which region?"),
        ("agent_message_chunk", "Using eu-west-1"),
    ]


def test_an_ended_reply_and_a_cut_short_one_in_the_same_turn() -> None:
    events = [
        USER,
        partial_event("m1", "text", "Step one."),
        final("m1", "Step one."),
        partial_event("m2", "text", "Step "),
        partial_event("m2", "text", "two"),
    ]
    assert replayed(events) == [
        ("agent_message_chunk", "Step one."),
        ("agent_message_chunk", "Step two"),
    ]


def test_an_old_log_without_partials_replays_as_before() -> None:
    events = [USER, final("m1", "Done.")]
    assert replayed(events) == [("agent_message_chunk", "Done.")]
    assert model_messages(events, images=False) == [
        {"role": "user", "content": [{"type": "text", "text": "plan"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]


def test_malformed_partials_are_ignored() -> None:
    events = [
        USER,
        {"type": "partial_reply", "messageId": ["not", "a", "string"], "text": "x"},
        {"type": "partial_reply", "messageId": "m1", "kind": "image", "text": "x"},
        {"type": "partial_reply", "messageId": "m1", "kind": "text", "text": 7},
        partial_event("m1", "text", "kept"),
    ]
    assert replayed(events) == [("agent_message_chunk", "kept")]


def test_the_model_sees_a_cut_short_reply_as_an_interrupted_assistant_message() -> None:
    events = [
        USER,
        partial_event("m1", "thinking", "unsigned thoughts"),
        partial_event("m1", "text", "Half of "),
        partial_event("m1", "text", "the plan"),
        {**USER, "messageId": "u2"},
    ]
    messages = model_messages(events, images=False)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    texts = [block["text"] for block in messages[1]["content"]]
    assert texts[0] == "Half of the plan"
    assert "interrupted" in texts[1]
    assert all(block["type"] == "text" for block in messages[1]["content"])


def test_a_buffered_partial_grows_only_with_the_same_reply_and_kind() -> None:
    unstored = [partial_event("m1", "text", "a")]
    assert extend_partial(unstored, partial_event("m1", "text", "b"))
    assert not extend_partial(unstored, partial_event("m1", "thinking", "c"))
    assert not extend_partial(unstored, partial_event("m2", "text", "d"))
    assert not extend_partial([], partial_event("m1", "text", "e"))
    assert unstored == [partial_event("m1", "text", "ab")]
    long = [partial_event("m1", "text", "x" * MAX_JOINED_CHARS)]
    assert not extend_partial(long, partial_event("m1", "text", "y"))


def test_the_model_ignores_partials_of_an_ended_reply() -> None:
    events = [USER, partial_event("m1", "text", "Do"), final("m1", "Done.")]
    assert model_messages(events, images=False)[1:] == [
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}
    ]


# ---------------------------------------------------------------------- through the agent


@pytest.mark.anyio
async def test_every_chunk_the_client_received_is_stored_while_the_reply_streams(
    tmp_path: Path,
) -> None:
    pieces = [f"piece {number} " for number in range(40)]
    model = StallingModelClient(pieces)
    async with open_agent(tmp_path, model) as client:
        session_id = await client.new_session()
        request_id = await client.send(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
        )
        index = 0
        with anyio.fail_after(60):
            for _ in pieces:
                index, _update = await client.wait_update("agent_message_chunk", start=index)
                index += 1
        # The model stalls for ever: no final message exists, only the write-ahead.
        stored = read_events(tmp_path / "home", session_id, with_partials=True)
        await client.notify("session/cancel", {"sessionId": session_id})
        await client.reply(request_id)
    # One partial per written batch (deltas of one batch joined), at most one per chunk.
    assert stored[0]["type"] == "user_message"
    assert {e["type"] for e in stored[1:]} == {"partial_reply"}
    assert 1 <= len(stored) - 1 <= len(pieces)
    assert "".join(e["text"] for e in stored[1:]) == "".join(pieces)
    assert replayed(stored) == [("agent_message_chunk", "".join(pieces))]
