"""Slash commands: the model gets the command's instructions, replay shows what was typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.handlers.agent_harness import open_agent

pytestmark = pytest.mark.anyio


def _first_texts(request: object) -> list[str]:
    messages = request.messages  # type: ignore[attr-defined]
    return [m["content"][0]["text"] for m in messages if m["role"] == "user"]


async def test_a_slash_command_is_expanded_in_every_later_request(tmp_path: Path) -> None:
    async with open_agent(tmp_path, ["found 2 problems", "fixed"]) as client:
        session_id = await client.new_session()
        await client.prompt(session_id, "/validate modules/vpc")
        await client.prompt(session_id, "now fix them")
        first, second = client.model_requests
        load = {"sessionId": session_id, "cwd": str(client.workspace), "mcpServers": []}
        replay = await client.call("session/load", load)
    expanded = _first_texts(first)[0]
    assert "validators" in expanded and "modules/vpc" in expanded
    # The earlier command is sent expanded again, not as the raw "/validate" text.
    assert _first_texts(second)[0] == expanded
    typed = [
        u["update"]["content"]["text"]
        for u in replay.updates
        if u["update"]["sessionUpdate"] == "user_message_chunk"
    ]
    assert typed == ["/validate modules/vpc", "now fix them"]
