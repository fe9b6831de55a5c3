"""The proxy's live judge in memory: each rule on a line sequence that breaks it, and the
same traffic done right producing no finding."""

from __future__ import annotations

import json
from typing import Any

from acp_conformance.proxy.monitor import LiveMonitor

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
INIT_OK = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1, "agentCapabilities": {}}}
NEW_PARAMS = {"cwd": "/w", "mcpServers": []}
NEW = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": NEW_PARAMS}
NEW_OK = {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s1"}}
PROMPT = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "session/prompt",
    "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
}
PROMPT_OK = {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}


def chunk(session: str = "s1") -> dict[str, Any]:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    params = {"sessionId": session, "update": update}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def judge(*frames: tuple[str, Any]) -> tuple[LiveMonitor, list[str]]:
    monitor = LiveMonitor()
    rules = []
    for direction, message in frames:
        raw = message if isinstance(message, bytes) else json.dumps(message).encode()
        rules += [f.rule.id for f in monitor.feed(direction, raw)]  # type: ignore[arg-type]
    rules += [f.rule.id for f in monitor.finish()]
    return monitor, rules


def test_a_correct_turn_has_no_findings() -> None:
    _, rules = judge(
        ("c2a", INIT), ("a2c", INIT_OK), ("c2a", NEW), ("a2c", NEW_OK),
        ("c2a", PROMPT), ("a2c", chunk()), ("a2c", PROMPT_OK),
    )  # fmt: skip
    assert rules == []


def test_a_turn_update_after_the_prompt_result_until_the_next_prompt() -> None:
    again = {**PROMPT, "id": 4}
    _, rules = judge(
        ("c2a", INIT), ("a2c", INIT_OK), ("c2a", NEW), ("a2c", NEW_OK),
        ("c2a", PROMPT), ("a2c", PROMPT_OK), ("a2c", chunk()),
        ("c2a", again), ("a2c", chunk()),
    )  # fmt: skip
    assert rules == ["prompt.updates-before-response"]


def test_an_update_before_the_result_that_hands_out_its_session() -> None:
    _, rules = judge(
        ("c2a", INIT), ("a2c", INIT_OK), ("c2a", NEW), ("a2c", chunk()), ("a2c", NEW_OK)
    )  # fmt: skip
    assert rules == ["prompt.updates-after-session-handed-out"]


def test_an_update_for_a_session_nobody_named() -> None:
    _, rules = judge(("c2a", INIT), ("a2c", INIT_OK), ("a2c", chunk("ghost")))
    assert rules == ["prompt.updates-name-known-session"]


def test_responses_must_echo_ids_and_come_once() -> None:
    _, rules = judge(
        ("c2a", INIT), ("a2c", {**INIT_OK, "id": "1"}),
        ("c2a", NEW), ("a2c", NEW_OK), ("a2c", NEW_OK), ("a2c", {**NEW_OK, "id": 99}),
    )  # fmt: skip
    assert rules == [
        "jsonrpc.id-echo",
        "jsonrpc.one-response-per-request",
        "jsonrpc.one-response-per-request",
    ]


def test_client_answers_are_judged_too() -> None:
    ask = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "fs/read_text_file",
        "params": {"sessionId": "s1", "path": "/w/a"},
    }
    _, rules = judge(
        ("c2a", INIT), ("a2c", INIT_OK), ("c2a", NEW), ("a2c", NEW_OK),
        ("a2c", ask), ("c2a", {"jsonrpc": "2.0", "id": "7", "result": {"content": "x"}}),
        ("a2c", {**ask, "id": 8}), ("c2a", {"jsonrpc": "2.0", "id": 8, "result": {"text": 1}}),
    )  # fmt: skip
    assert rules == ["client.jsonrpc.id-echo", "client.schema.messages"]


def test_non_frames_bad_envelopes_and_schema_errors() -> None:
    monitor, rules = judge(
        ("c2a", NEW),
        ("c2a", INIT), ("a2c", b"starting up"), ("a2c", b"\xff\xfe"),
        ("a2c", {"jsonrpc": "1.0", "id": 1, "result": {}}),
        ("a2c", {"jsonrpc": "2.0", "id": 1, "result": {"agentCapabilities": {}}}),
    )  # fmt: skip
    assert rules == [
        "client.init.first",
        "transport.stdout-only-json",
        "transport.utf8",
        "jsonrpc.envelope-valid",
        "schema.agent-messages-valid",
    ]
    assert monitor.findings[-1].reason.startswith("initialize result (v1 schema)")


def test_v2_is_judged_by_its_own_schemas_and_batches_entry_by_entry() -> None:
    info = {"name": "c", "version": "1"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 2}}
    init["params"]["info"] = info  # type: ignore[index]
    init_ok = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {}},
    }
    batch = [{"jsonrpc": "2.0", "id": 5, "method": "session/list", "params": {}}, {"x": 1}]
    monitor, rules = judge(("c2a", init), ("a2c", init_ok), ("c2a", batch))
    assert monitor.version == 2
    assert rules == ["client.jsonrpc.envelope"]
    assert any("session/list" in note for note in monitor.notes)


def test_the_valid_shape_cache_skips_only_messages_differing_in_free_text() -> None:
    """Free text is a plain string in every schema, so a second chunk differing only there is
    known valid; one differing anywhere else (a non-string text) is still validated."""
    other_text = chunk()
    other_text["params"]["update"]["content"]["text"] = "a different text"
    bad = chunk()
    bad["params"]["update"]["content"]["text"] = 7
    _, rules = judge(
        ("c2a", INIT), ("a2c", INIT_OK), ("c2a", NEW), ("a2c", NEW_OK),
        ("c2a", PROMPT), ("a2c", chunk()), ("a2c", other_text), ("a2c", bad),
        ("a2c", PROMPT_OK),
    )  # fmt: skip
    assert rules == ["schema.agent-messages-valid"]
