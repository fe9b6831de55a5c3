"""A mode switch while a permission question is open decides the call (issue 8, item 11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    Frame,
    WireClient,
    final_update,
    in_memory_agent,
    result_text,
    selected,
    statuses,
    tool_results_in,
)

pytestmark = pytest.mark.anyio


def switch_mode_then_answer(mode_id: str, option_id: str) -> Any:
    """A permission handler that changes the session's mode first, then answers."""

    async def handler(client: WireClient, frame: Frame) -> Any:
        await client.set_mode(frame["params"]["sessionId"], mode_id)
        return selected(option_id)

    return handler


@pytest.mark.parametrize("option_id", ["allow_once", "allow_always"])
async def test_switch_to_read_only_while_asked_denies_the_write(
    workspace: Path, home: Path, option_id: str
) -> None:
    model = ScriptedModelClient(
        [Turn().tool_use("write_file", {"path": "a.tf", "content": "x\n"}, id="w1")],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = switch_mode_then_answer(
            "read_only", option_id
        )
        session = await run.client.new_session(workspace)
        result = await run.client.prompt(session, "write")
        assert result["stopReason"] == "end_turn"
        assert not (workspace / "a.tf").exists()
        assert statuses(run.client, "w1") == ["pending", "failed"]
        assert final_update(run.client, "w1")["rawOutput"]["declined"] is True
        block = tool_results_in(model.requests[-1].messages)["w1"]
        assert "read-only" in result_text(block)


async def test_switch_to_read_only_while_asked_denies_a_command(
    workspace: Path, home: Path
) -> None:
    model = ScriptedModelClient(
        [Turn().tool_use("bash", {"command": "touch ran"}, id="b1")], timing=False
    )
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = switch_mode_then_answer(
            "read_only", "allow_once"
        )
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "run")
        assert not (workspace / "ran").exists()
        assert statuses(run.client, "b1") == ["pending", "failed"]


async def test_switch_to_another_asking_mode_keeps_the_answer(workspace: Path, home: Path) -> None:
    model = ScriptedModelClient(
        [Turn().tool_use("write_file", {"path": "a.tf", "content": "x\n"}, id="w1")],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = switch_mode_then_answer(
            "accept_edits", "allow_once"
        )
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "write")
        assert (workspace / "a.tf").read_text() == "x\n"
