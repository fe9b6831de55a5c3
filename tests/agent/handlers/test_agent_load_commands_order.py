"""v1 ``session/load`` and ``session/resume``: the command list goes out before the answer.

Clients (and the official test kit) read a load's replay up to its answer; an
``available_commands_update`` written after it would be outside what they read.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.agent.handlers.agent_harness import open_agent

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("method", ["session/load", "session/resume"])
async def test_load_and_resume_send_the_command_list_before_the_answer(
    tmp_path: Path, method: str
) -> None:
    async with open_agent(tmp_path) as client:
        await client.initialize()
        session_id = await client.new_session()
        assert "result" in (await client.prompt(session_id, "hello")).frame
    async with open_agent(tmp_path) as client:
        await client.initialize()
        with anyio.fail_after(60):
            reply = await client.call(
                method,
                {"sessionId": session_id, "cwd": str(client.workspace), "mcpServers": []},
            )
            barrier = await client.barrier()
        after = client.updates_between(reply.index + 1, barrier, session_id)
    assert "result" in reply.frame
    assert "available_commands_update" in reply.kinds()
    assert after == []
