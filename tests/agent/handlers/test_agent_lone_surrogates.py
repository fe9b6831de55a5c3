"""Issue 19 item 2: a lone UTF-16 surrogate never poisons a session.

Before the fix, model text such as ``"bad \\ud800 text"`` (or a tool/MCP result holding one)
was stored as is, and every later prompt failed with -32603: the agent's own request body
could not be encoded as UTF-8, also after a reload. The model double here encodes each
request the way the SDK's HTTP client does (``ensure_ascii=False`` then UTF-8), so the
failure is the real one.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from iac_code.llm.anthropic_client import build_params
from iac_code.llm.contract import ModelRequest, StreamEvent
from iac_code.store import SessionStore, new_session_id
from iac_code.unicode_text import clean_json, clean_text
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.handlers.agent_harness import open_agent, read_events

pytestmark = pytest.mark.anyio

POISON = "bad \ud800 text"


def _wire_body(request: ModelRequest) -> bytes:
    params = build_params(request)
    return json.dumps(params, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class EncodingModel:
    """Encodes each request as the SDK would, then plays the script."""

    def __init__(self, turns: list[Any]) -> None:
        self.inner = ScriptedModelClient(turns, timing=False)
        self.bodies: list[bytes] = []

    @property
    def requests(self) -> list[ModelRequest]:
        return self.inner.requests

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        self.bodies.append(_wire_body(request))  # raises UnicodeEncodeError when poisoned
        return self.inner.stream(request)


def _no_surrogates(value: Any) -> bool:
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    return True


def test_clean_text_replaces_lone_halves_and_joins_split_pairs() -> None:
    assert clean_text(POISON) == "bad \ufffd text"
    assert clean_text("\udc00 and \ud800") == "\ufffd and \ufffd"
    assert clean_text("\ud83d" + "\ude00") == "\U0001f600"
    clean = {"a": ["ok", 1, None], "b": "é"}
    assert clean_json(clean) is clean


def test_requests_built_from_a_poisoned_history_encode_as_utf8() -> None:
    request = ModelRequest(
        model="claude-test",
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "text", "text": POISON}]},
            {"role": "user", "content": [{"type": "text", "text": "again \udfff"}]},
        ],
        max_tokens=100,
        system="sys \ud801",
    )
    body = json.loads(_wire_body(request))
    assert body["messages"][1]["content"][0]["text"] == "bad \ufffd text"
    assert request.messages[1]["content"][0]["text"] == POISON  # the request is not mutated


async def test_model_text_with_a_lone_surrogate_is_stored_and_relayed_clean(
    tmp_path: Path,
) -> None:
    model = EncodingModel([POISON, "second answer"])
    async with open_agent(tmp_path, model) as client:
        session_id = await client.new_session()
        first = await client.prompt(session_id, "say something odd")
        assert first.result["stopReason"] == "end_turn"
        chunks = [
            u["update"]["content"]["text"]
            for u in first.updates
            if u["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
        assert "".join(chunks) == "bad \ufffd text"
        second = await client.prompt(session_id, "and now?")
        assert second.result["stopReason"] == "end_turn", second.frame
    assert len(model.bodies) == 2
    events = read_events(tmp_path / "home", session_id)
    assert _no_surrogates(events)
    assert "bad \ufffd text" in json.dumps(events, ensure_ascii=False)


async def test_a_stored_poisoned_session_recovers_after_reload(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "ws").mkdir()
    store = SessionStore(home)
    session_id = new_session_id()
    store.create(session_id, str(tmp_path / "ws"))
    # What an agent without the fix stored: model text and a tool (or MCP) result with
    # lone surrogates.
    store.append_many(
        session_id,
        [
            {
                "type": "user_message",
                "messageId": "u1",
                "content": [{"type": "text", "text": "list things"}],
            },
            {
                "type": "assistant_message",
                "messageId": "a1",
                "blocks": [
                    {"type": "text", "text": POISON},
                    {"type": "tool_use", "id": "toolu_1", "name": "glob", "input": {"p": "*"}},
                ],
                "stopReason": "tool_use",
            },
            {
                "type": "tool_call",
                "toolCallId": "toolu_1",
                "title": "glob",
                "kind": "search",
                "rawInput": {"p": "*"},
                "locations": [],
            },
            {
                "type": "tool_result",
                "toolCallId": "toolu_1",
                "status": "completed",
                "modelContent": "file-\udc80.txt",
                "isError": False,
                "content": [{"type": "content", "content": {"type": "text", "text": "\udc80"}}],
                "rawOutput": {"name": "\udc80"},
            },
            {
                "type": "assistant_message",
                "messageId": "a2",
                "blocks": [{"type": "text", "text": "done \ud800"}],
                "stopReason": "end_turn",
            },
        ],
    )
    model = EncodingModel(["recovered"])
    async with open_agent(tmp_path, model) as client:
        loaded = await client.load(session_id)
        assert "result" in loaded.frame, loaded.frame
        assert _no_surrogates(loaded.updates)
        reply = await client.prompt(session_id, "continue")
        assert reply.result["stopReason"] == "end_turn", reply.frame
    sent = json.loads(model.bodies[0])
    texts = json.dumps(sent["messages"], ensure_ascii=False)
    assert "bad \ufffd text" in texts and "file-\ufffd.txt" in texts


async def test_a_tool_result_with_a_lone_surrogate_is_persisted_clean(tmp_path: Path) -> None:
    async with open_agent(tmp_path, ["ok"]) as client:
        session_id = await client.new_session()
        session = client.agent.sessions[session_id]
        client.agent.persist(
            session,
            {
                "type": "tool_result",
                "toolCallId": "t1",
                "status": "completed",
                "modelContent": "mcp said \ud800",
                "isError": False,
                "content": [],
                "rawOutput": {"text": "\udfff"},
            },
        )
        assert session.events[-1]["modelContent"] == "mcp said \ufffd"
    events = read_events(tmp_path / "home", session_id)
    assert events[-1]["rawOutput"] == {"text": "\ufffd"}
