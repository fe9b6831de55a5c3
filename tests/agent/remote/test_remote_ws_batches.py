"""Bursts of agent output leave a WebSocket in one write (``iac_code.remote.ws_batches``): the
client still gets one text frame per message, in order, and without the extension (another
ASGI server, or hypercorn's own stream class) the endpoint sends frame by frame."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer
from hypercorn.protocol import h2, h11
from iac_code.remote.ws_batches import SEND_MANY, enable_batched_sends

from tests.agent.remote.llm_script import CHUNKS, chunk_text
from tests.agent.remote.remote_kit import agent_server, ws_client

pytestmark = pytest.mark.anyio

COUNT = 2000


@pytest.fixture
def sent_messages(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every ASGI message the app hands the swapped WebSocket stream class."""
    assert enable_batched_sends()
    stream_class = h11.WSStream
    original = stream_class.app_send
    seen: list[dict[str, Any]] = []

    async def recording(self: Any, message: Any) -> None:
        if message is not None:
            seen.append(message)
        await original(self, message)

    monkeypatch.setattr(stream_class, "app_send", recording)
    yield seen


async def test_a_streamed_turn_arrives_whole_and_in_order_in_fewer_writes(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer, sent_messages: list[dict[str, Any]]
) -> None:
    async with agent_server(home, llm_server.url) as server, ws_client(server.ws_url) as client:
        await client.initialize()
        session_id = await client.new_session(workspace)
        result = await client.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": f"{CHUNKS}{COUNT}"}]},
        )
        assert result["stopReason"] == "end_turn"
        assert client.text_of(session_id) == chunk_text(COUNT)  # each chunk once, in order
    batches = [m["texts"] for m in sent_messages if m["type"] == SEND_MANY]
    assert batches, "the endpoint never used the extension"
    assert sum(len(texts) for texts in batches) >= COUNT
    assert max(len(texts) for texts in batches) > 1  # some burst went out in one write


async def test_without_the_extension_frames_go_one_by_one(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    assert enable_batched_sends(False)
    assert "BatchingWSStream" not in (h11.WSStream.__name__, h2.WSStream.__name__)
    try:
        async with agent_server(home, llm_server.url) as server:
            enable_batched_sends(False)  # agent_server turned it on, as the real server does
            async with ws_client(server.ws_url) as client:
                await client.initialize()
                session_id = await client.new_session(workspace)
                params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]}
                params["prompt"][0]["text"] = f"{CHUNKS}200"
                result = await client.request("session/prompt", params)
                assert result["stopReason"] == "end_turn"
                assert client.text_of(session_id) == chunk_text(200)
    finally:
        assert enable_batched_sends()


def test_enabling_twice_swaps_in_one_class() -> None:
    assert enable_batched_sends() and enable_batched_sends()
    assert h11.WSStream is h2.WSStream
    assert h11.WSStream.__name__ == "BatchingWSStream"
    assert enable_batched_sends(False)
    assert h11.WSStream.__name__ == "WSStream"
    assert enable_batched_sends()
