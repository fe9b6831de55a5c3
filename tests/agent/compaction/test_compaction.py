"""Context compaction: older turns are summarised near the window; recent ones stay verbatim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_scripted_llm.script import Turn
from iac_code.agent.acp_agent import IacAgent
from iac_code.agent.compaction import kept_from, needs_compaction
from iac_code.router import Router
from iac_code.rpc.memory import raw_peer_connection
from iac_code.settings import Settings
from iac_code.store import SessionStore
from iac_code_dev.fake_llm import ScriptedModelClient

pytestmark = pytest.mark.anyio
WINDOW = 1_000


def _big(text: str) -> Turn:
    """A reply whose usage says the prompt almost filled the (tiny) window."""
    return Turn().text(text).stop("end_turn").usage(input_tokens=900, output_tokens=5)


class Client:
    def __init__(self, peer: Any) -> None:
        self.peer = peer
        self.next_id = 100
        self.updates: list[dict[str, Any]] = []

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        await self.peer.send(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )
        while True:
            frame = await self.peer.receive()
            if frame.get("id") == self.next_id:
                return frame
            if frame.get("method") == "session/update":
                self.updates.append(frame["params"]["update"])


def test_threshold_and_boundary_rules() -> None:
    assert needs_compaction(850, 1_000)
    assert not needs_compaction(849, 1_000)
    events = [{"type": "user_message"}, {"type": "assistant_message"}] * 3
    assert kept_from(events) == 2  # the last two prompts (indices 2 and 4) stay verbatim
    assert kept_from(events[:4]) is None  # only two prompts: nothing to summarise
    events.append({"type": "compaction", "keptFrom": 2, "summary": "s"})
    assert kept_from(events) is None  # already compacted up to there


@pytest.mark.parametrize("advertise", [False, True])
async def test_history_is_summarised_near_the_window(tmp_path: Path, advertise: bool) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    model = ScriptedModelClient(
        [
            _big("one"),
            _big("two"),
            Turn().text("SUMMARY: did one and two").stop("end_turn"),
            _big("three"),
        ],
        timing=False,
    )
    store = SessionStore(tmp_path / "home")
    settings = Settings(home=tmp_path / "home", context_window=WINDOW)
    connection, peer = raw_peer_connection(None)
    agent = IacAgent(settings, connection, store, model_client=model)
    connection.handler = Router(agent)
    client = Client(peer)
    capabilities = {"session": {"compaction": {}}} if advertise else {}
    async with anyio.create_task_group() as group:
        group.start_soon(connection.serve)
        with anyio.fail_after(10):
            await client.request(
                "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
            )
            new = await client.request("session/new", {"cwd": str(cwd), "mcpServers": []})
            session_id = new["result"]["sessionId"]
            for text in ("first", "second", "third"):
                answer = await client.request(
                    "session/prompt",
                    {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
                )
                assert answer["result"]["stopReason"] == "end_turn"
        peer.close_input()

    # The third prompt triggered one summary request, then the real one.
    assert len(model.requests) == 4
    summary_request, after = model.requests[2], model.requests[3]
    assert "Summarise the conversation" in summary_request.messages[-1]["content"][0]["text"]
    sent = [block.get("text", "") for message in after.messages for block in message["content"]]
    assert any("SUMMARY: did one and two" in text for text in sent)
    assert "first" not in sent  # summarised away from the model's view
    assert "second" in sent and "third" in sent  # the recent prompts stay verbatim

    markers = [e for e in store.load_events(session_id) if e["type"] == "compaction"]
    assert len(markers) == 1 and markers[0]["summary"] == "SUMMARY: did one and two"
    notices = [
        u
        for u in client.updates
        if u["sessionUpdate"] == "agent_message_chunk" and "summarised" in u["content"]["text"]
    ]
    assert len(notices) == 1
    progress = [u["status"] for u in client.updates if u["sessionUpdate"] == "compaction_update"]
    assert progress == (["in_progress", "completed"] if advertise else [])
