"""JSON-RPC batches on a real ``iac-code acp``: answered under v2, one -32600 under v1.

The v2 draft allows a non-empty array of messages on one line. Each case runs in its own
process, as the official test kit does; every wait is bounded by the harness timeouts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.stdio_harness import BlockingAgent, spawn
from tests.agent.protocol_v2.v2_kit_support import start_v2

pytestmark = pytest.mark.subprocess


def _next_reply(agent: BlockingAgent) -> Any:
    """The next line that is not one of the agent's own notifications or requests."""
    while True:
        frame = agent.next_frame()
        if isinstance(frame, dict) and "method" in frame:
            continue
        return frame


def _list_call(request_id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/list"}


def test_v2_batches_follow_the_draft(llm_server: ScriptedLLMServer, home: Path) -> None:
    with spawn(home, llm_server.url) as agent:
        start_v2(agent)
        agent.send_raw(b"[]")
        empty = _next_reply(agent)
        agent.send_raw(json.dumps([{"jsonrpc": "2.0", "method": "_kit/notify_only"}]).encode())
        agent.send_raw(json.dumps([17, True, None]).encode())
        invalid = _next_reply(agent)  # the notification-only batch had no reply before it
        agent.send_raw(json.dumps([_list_call("a"), _list_call("b")]).encode())
        pair = _next_reply(agent)
        agent.send(_list_call("single"))
        single = _next_reply(agent)
    assert isinstance(empty, dict)
    assert empty["id"] is None and empty["error"]["code"] == -32600
    assert isinstance(invalid, list) and len(invalid) == 3
    assert all(e["id"] is None and e["error"]["code"] == -32600 for e in invalid)
    assert isinstance(pair, list) and {item["id"] for item in pair} == {"a", "b"}
    assert all("sessions" in item["result"] for item in pair)
    assert single["id"] == "single" and "result" in single


def test_v1_keeps_answering_an_array_with_one_invalid_request(
    llm_server: ScriptedLLMServer, home: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        agent.initialize()
        agent.send_raw(json.dumps([_list_call("a"), _list_call("b")]).encode())
        answer = _next_reply(agent)
    assert isinstance(answer, dict)
    assert answer["id"] is None and answer["error"]["code"] == -32600
