"""The official ``agent-client-protocol`` Python client drives tools in ``iac-code acp``.

The scripted model asks to write two files in one response; the SDK client's
``request_permission`` approves the first (allow_once) and rejects the second (reject_once).
The SDK validates every request the agent sends it, so a malformed permission request or
session update would fail this test too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from acp import Client, RequestPermissionResponse, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    PermissionOption,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)
from acp_scripted_llm import ScriptedLLMServer, Turn

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.subprocess]

WAIT_S = 120.0


class PermissionPickingClient:
    """An ACP client that allows writes to ``allowed`` and rejects every other write."""

    def __init__(self, allowed: str) -> None:
        self.allowed = allowed
        self.asked: list[dict[str, Any]] = []
        self.tool_updates: list[ToolCallStart | ToolCallProgress] = []

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        path = (tool_call.raw_input or {}).get("path")
        self.asked.append({"toolCallId": tool_call.tool_call_id, "path": path})
        wanted_kind = "allow_once" if path == self.allowed else "reject_once"
        option = next(o for o in options if o.kind == wanted_kind)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, ToolCallStart | ToolCallProgress):
            self.tool_updates.append(update)


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer(
        [
            Turn()
            .text("Writing both files.")
            .tool_use("write_file", {"path": "first.tf", "content": "# first\n"}, id="t_first")
            .tool_use("write_file", {"path": "second.tf", "content": "# second\n"}, id="t_second")
            .stop("tool_use"),
            Turn().text("One of them was declined.").stop("end_turn"),
        ]
    )
    server.start()
    try:
        yield server
    finally:
        server.close()


async def test_sdk_client_approves_one_write_and_rejects_the_other(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "IAC_CODE_"))}
    env.update(
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=llm.url,
        IAC_CODE_HOME=str(tmp_path / "home"),
    )
    client = PermissionPickingClient(allowed="first.tf")
    with anyio.fail_after(WAIT_S):
        # The client advertises no fs/terminal capability, so only the two methods it defines
        # can be called; it is not a full implementation of the SDK's Client protocol.
        async with spawn_agent_process(
            cast(Client, client),
            sys.executable,
            "-m",
            "iac_code.cli",
            "acp",
            env=env,
            transport_kwargs={"stderr": subprocess.DEVNULL},
        ) as (connection, _process):
            await connection.initialize(
                protocol_version=1, client_capabilities=ClientCapabilities()
            )
            session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
            response = await connection.prompt(
                session_id=session.session_id, prompt=[text_block("write both files")]
            )

    assert response.stop_reason == "end_turn"
    assert (workspace / "first.tf").read_text() == "# first\n"
    assert not (workspace / "second.tf").exists()
    assert client.asked == [
        {"toolCallId": "t_first", "path": "first.tf"},
        {"toolCallId": "t_second", "path": "second.tf"},
    ]
    final = {
        update.tool_call_id: update.status
        for update in client.tool_updates
        if isinstance(update, ToolCallProgress) and update.status in ("completed", "failed")
    }
    # The agent's own check of the edited first.tf ends the turn (issue 33).
    checks = [tool_id for tool_id in final if tool_id.startswith("toolu_iac_check_")]
    assert [final.pop(tool_id) for tool_id in checks] == ["completed"]
    assert final == {"t_first": "completed", "t_second": "failed"}
    # The model was told about both outcomes.
    results = {
        block["tool_use_id"]: block
        for message in llm.model_requests[-1].messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }
    assert set(results) == {"t_first", "t_second"}
    assert results["t_second"]["is_error"] is True
    assert "declined" in str(results["t_second"]["content"])
