"""``iac-code acp`` driven by the official ``agent-client-protocol`` Python client (0.12.1)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from acp import PROTOCOL_VERSION, Client, text_block
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ClientCapabilities,
    ContentChunk,
    Implementation,
    RequestPermissionResponse,
    UserMessageChunk,
)
from acp.stdio import spawn_agent_process
from acp_scripted_llm import ScriptedLLMServer, Turn

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.subprocess]

INTEROP_THOUGHT = "Looking at the stack."
INTEROP_TEXT = "This stack deploys one S3 bucket with versioning enabled."


@pytest.fixture
def interop_llm() -> Iterator[ScriptedLLMServer]:
    turns = [Turn().thinking(INTEROP_THOUGHT, chunks=2).text(INTEROP_TEXT, chunks=5)]
    with ScriptedLLMServer(turns) as server:
        yield server


class RecordingClient:
    """A minimal editor: records every session update and never grants a permission."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permission_requests = 0
        self._waiters: list[anyio.Event] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.set()

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        """The SDK runs notification handlers as tasks, so they may trail a response."""
        with anyio.fail_after(60):
            while not predicate():
                waiter = anyio.Event()
                self._waiters.append(waiter)
                await waiter.wait()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests += 1
        return RequestPermissionResponse.model_validate({"outcome": {"outcome": "cancelled"}})

    def texts(self, kind: type[ContentChunk], session_id: str) -> str:
        chunks = [u for s, u in self.updates if s == session_id and isinstance(u, kind)]
        return "".join(getattr(chunk.content, "text", "") for chunk in chunks)

    def take(self) -> list[tuple[str, Any]]:
        taken, self.updates = self.updates, []
        return taken


async def test_the_official_python_client_runs_a_session_end_to_end(
    tmp_path: Path, interop_llm: ScriptedLLMServer
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {
        "IAC_CODE_HOME": str(tmp_path / "home"),
        "ANTHROPIC_BASE_URL": interop_llm.url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    client = RecordingClient()
    with anyio.fail_after(90):
        async with spawn_agent_process(
            # Only the methods this run needs; the SDK looks handlers up by name.
            cast(Client, client),
            sys.executable,
            "-m",
            "iac_code.cli",
            "acp",
            env=env,
            # A generous shutdown bound: the SDK SIGTERMs an agent that is slow to exit, and
            # parallel test workers can make a clean exit take a few seconds.
            transport_kwargs={"stderr": asyncio.subprocess.DEVNULL, "shutdown_timeout": 20.0},
        ) as (connection, process):
            init = await connection.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="interop-test", version="0"),
            )
            assert init.protocol_version == 1
            assert init.agent_capabilities is not None and init.agent_info is not None
            assert init.agent_capabilities.load_session is True
            assert init.agent_info.name == "iac-code"

            session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
            session_id = session.session_id
            assert session.modes is not None
            assert session.modes.current_mode_id == "default"

            answer = await connection.prompt(
                session_id=session_id, prompt=[text_block("What does this stack deploy?")]
            )
            assert answer.stop_reason == "end_turn"
            assert client.texts(AgentThoughtChunk, session_id) == INTEROP_THOUGHT
            assert client.texts(AgentMessageChunk, session_id) == INTEROP_TEXT
            client.take()

            loaded = await connection.load_session(
                cwd=str(workspace), session_id=session_id, mcp_servers=[]
            )
            assert loaded is not None
            await client.wait_until(
                lambda: client.texts(AgentMessageChunk, session_id) == INTEROP_TEXT
            )
            assert client.texts(UserMessageChunk, session_id) == "What does this stack deploy?"
            assert client.texts(AgentThoughtChunk, session_id) == INTEROP_THOUGHT

            listed = await connection.list_sessions(cwd=str(workspace))
            assert [s.session_id for s in listed.sessions] == [session_id]
        assert process.returncode == 0
    assert client.permission_requests == 0
