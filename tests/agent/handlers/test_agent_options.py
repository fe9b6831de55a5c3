"""Modes and config options, in memory (SPEC §2, §2.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.handlers.agent_harness import open_agent

pytestmark = pytest.mark.anyio


def option(options: list[dict[str, Any]], config_id: str) -> dict[str, Any]:
    return next(o for o in options if o["id"] == config_id)


async def test_set_mode_switches_and_reports_current_mode_update(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        start = len(client.received)
        reply = await client.call(
            "session/set_mode", {"sessionId": session_id, "modeId": "read_only"}
        )
        updates = client.updates_between(start, reply.index, session_id)
        assert client.agent.sessions[session_id].mode == "read_only"
    assert reply.result == {}
    assert {"sessionUpdate": "current_mode_update", "currentModeId": "read_only"} in updates


async def test_set_mode_rejects_an_unknown_mode(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        reply = await client.call("session/set_mode", {"sessionId": session_id, "modeId": "yolo"})
    assert reply.error["code"] == -32602
    assert "modeId" in reply.error["data"]


async def test_the_mode_survives_close_and_load(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        await client.call("session/set_mode", {"sessionId": session_id, "modeId": "accept_edits"})
        await client.call("session/close", {"sessionId": session_id})
        loaded = await client.load(session_id)
    assert loaded.result["modes"]["currentModeId"] == "accept_edits"


async def test_set_config_option_answers_the_full_list_and_sends_an_update(
    tmp_path: Path,
) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        reply = await client.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "value": "claude-haiku-4-5"},
        )
        updates = [u["update"] for u in reply.updates]
    options = reply.result["configOptions"]
    assert [o["id"] for o in options] == ["model", "thought_level"]
    assert option(options, "model")["currentValue"] == "claude-haiku-4-5"
    config_updates = [u for u in updates if u["sessionUpdate"] == "config_option_update"]
    assert config_updates == [{"sessionUpdate": "config_option_update", "configOptions": options}]


async def test_config_set_is_an_alias_of_set_config_option(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        reply = await client.call(
            "config/set",
            {"sessionId": session_id, "configId": "thought_level", "value": "low"},
        )
    assert option(reply.result["configOptions"], "thought_level")["currentValue"] == "low"


@pytest.mark.parametrize(
    ("config_id", "value", "field"),
    [
        ("temperature", "hot", "configId"),
        ("model", "gpt-9", "value"),
        ("thought_level", "max", "value"),
    ],
)
async def test_set_config_option_rejects_unknown_ids_and_values(
    tmp_path: Path, config_id: str, value: str, field: str
) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        reply = await client.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": config_id, "value": value},
        )
    assert reply.error["code"] == -32602
    assert list(reply.error["data"]) == [field]


async def test_a_new_model_and_thinking_level_apply_to_the_next_model_call(
    tmp_path: Path,
) -> None:
    async with open_agent(tmp_path, ["first", "second"]) as client:
        session_id = await client.new_session()
        await client.prompt(session_id, "one")
        for config_id, value in (("model", "claude-opus-4-6"), ("thought_level", "medium")):
            await client.call(
                "session/set_config_option",
                {"sessionId": session_id, "configId": config_id, "value": value},
            )
        await client.prompt(session_id, "two")
        first, second = client.model_requests
    assert first.model == "claude-sonnet-4-6"
    assert first.thinking_budget is None
    assert second.model == "claude-opus-4-6"
    assert second.thinking_budget == 8_192


async def test_config_values_survive_close_and_load(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        await client.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "value": "claude-haiku-4-5"},
        )
        await client.call("session/close", {"sessionId": session_id})
        loaded = await client.load(session_id)
    assert option(loaded.result["configOptions"], "model")["currentValue"] == "claude-haiku-4-5"
