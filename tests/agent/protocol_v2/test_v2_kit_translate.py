"""The pure v2 mappings behind the kit fixes: whole-message starts in a replay, alpha.3 shapes."""

from __future__ import annotations

from typing import Any

import pytest
from acp_schema.validation import validate_message
from iac_code.v2 import translate


def _chunk(kind: str, message_id: str) -> dict[str, Any]:
    return {
        "sessionUpdate": kind,
        "messageId": message_id,
        "content": {"type": "text", "text": "x"},
    }


def test_a_new_message_id_starts_whole_once() -> None:
    seen: set[str] = set()
    first = translate.message_start(_chunk("agent_message_chunk", "m1"), seen)
    again = translate.message_start(_chunk("agent_message_chunk", "m1"), seen)
    assert first == {"sessionUpdate": "agent_message", "messageId": "m1", "content": []}
    assert again is None


@pytest.mark.parametrize(
    ("kind", "whole"),
    [
        ("user_message_chunk", "user_message"),
        ("agent_message_chunk", "agent_message"),
        ("agent_thought_chunk", "agent_thought"),
    ],
)
def test_each_chunk_kind_starts_its_own_message_kind(kind: str, whole: str) -> None:
    start = translate.message_start(_chunk(kind, "m"), set())
    assert start is not None and start["sessionUpdate"] == whole
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": start},
    }
    assert validate_message(message, version=2) == []


def test_a_whole_message_update_counts_as_the_start_and_other_kinds_need_none() -> None:
    seen: set[str] = set()
    whole = {"sessionUpdate": "user_message", "messageId": "u1", "content": []}
    assert translate.message_start(whole, seen) is None
    assert translate.message_start(_chunk("user_message_chunk", "u1"), seen) is None
    assert translate.message_start({"sessionUpdate": "plan_update", "plan": {}}, seen) is None


#: One v1 update of each kind the newest v2 draft shares with v1 1.25 unchanged.
_SHARED_UPDATES = [
    {"sessionUpdate": "notice", "severity": "warning", "title": "Context almost full"},
    {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"},
    {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": "c1",
        "content": {"type": "text", "text": "Summary so far"},
    },
]


@pytest.mark.parametrize("v1", _SHARED_UPDATES, ids=lambda u: u["sessionUpdate"])
def test_notices_and_compaction_updates_pass_unchanged_as_v2_updates(v1: dict[str, Any]) -> None:
    v2 = translate.update(v1)
    assert v2 == v1
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": v2},
    }
    assert validate_message(message, version=2) == []


def test_a_command_is_a_tagged_command_entry_in_v2() -> None:
    entry = translate.command({"name": "plan", "description": "Plan", "input": {"hint": "what"}})
    assert entry == {
        "type": "command",
        "name": "plan",
        "description": "Plan",
        "input": {"type": "text", "hint": "what"},
    }
