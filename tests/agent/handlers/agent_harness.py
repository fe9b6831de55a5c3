"""An in-memory ACP client wired to a real ``IacAgent``, for the agent tests.

The agent runs in this process behind the real ``Router`` and ``Connection``, on an in-memory
NDJSON byte stream; the test side is the shared :class:`~iac_code_dev.wire_client.WireClient`
over that stream, so every assertion is about the frames that would be on the wire. Every
frame read is kept in :attr:`AgentClient.received` in arrival order, which lets tests check
ordering ("all updates before the response", "nothing after it"). The agent's requests are
left unanswered, as a client that ignores them would, and every wait is bounded by
:data:`READ_TIMEOUT`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from iac_code.agent.acp_agent import IacAgent
from iac_code.llm.contract import ModelClient, ModelRequest, StreamEvent, TextDelta
from iac_code.router import Router
from iac_code.rpc.connection import Connection
from iac_code.rpc.memory import memory_byte_pipe
from iac_code.settings import Settings
from iac_code.store import SessionStore
from iac_code.versioned_router import route_versions
from iac_code_dev.fake_llm import ScriptedModelClient
from iac_code_dev.wire_client import Frame, Reply, WireClient, open_pipe_client

__all__ = ["AgentClient", "Frame", "Reply", "open_agent"]

READ_TIMEOUT = 60.0


@dataclass
class AgentClient:
    """The test's end of an in-memory connection to the agent: the shared wire client, with
    the agent, its model and its workspace at hand."""

    wire: WireClient
    agent: IacAgent
    model: ModelClient
    workspace: Path

    @property
    def received(self) -> list[Any]:
        """Every frame the agent wrote so far, in order."""
        return self.wire.frames

    # ------------------------------------------------------------------ sending

    async def send(self, method: str, params: Any = None, *, request_id: Any = None) -> Any:
        """Send a request and return its id (without waiting for the answer)."""
        return await self.wire.start_request(method, params, request_id=request_id)

    async def notify(self, method: str, params: Any = None) -> None:
        await self.wire.notify(method, params)

    async def send_together(self, *messages: Frame) -> None:
        """Write several frames in one chunk, so the agent reads them in one go."""
        await self.wire.send_together(*messages)

    # ------------------------------------------------------------------ receiving

    async def reply(self, request_id: Any) -> Reply:
        """The answer to ``request_id``, with the updates that arrived since it was sent."""
        return await self.wire.reply(request_id)

    async def call(self, method: str, params: Any = None) -> Reply:
        return await self.wire.call(method, params)

    async def wait_update(self, kind: str, *, start: int = 0) -> tuple[int, dict[str, Any]]:
        """The first ``session/update`` of ``kind`` at or after ``start``: (index, params)."""
        index = await self.wire.wait_update(kind, start=start)
        return index, self.received[index]["params"]

    async def barrier(self) -> int:
        """Round-trip a cheap request; every frame queued before it is then in ``received``."""
        return (await self.call("session/list", {})).index

    def updates_between(self, start: int, end: int, session_id: str) -> list[dict[str, Any]]:
        return [
            f["params"]["update"]
            for f in self.received[start:end]
            if f.get("method") == "session/update" and f["params"]["sessionId"] == session_id
        ]

    # ------------------------------------------------------------------ shortcuts

    async def initialize(self, **params: Any) -> Reply:
        return await self.call("initialize", {"protocolVersion": 1, **params})

    async def new_session(self, cwd: Path | None = None, **params: Any) -> str:
        reply = await self.call(
            "session/new", {"cwd": str(cwd or self.workspace), "mcpServers": [], **params}
        )
        return str(reply.result["sessionId"])

    async def prompt(self, session_id: str, *blocks: Any) -> Reply:
        prompt = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
        return await self.call("session/prompt", {"sessionId": session_id, "prompt": prompt})

    async def load(self, session_id: str, cwd: Path | None = None) -> Reply:
        return await self.wire.load(session_id, cwd or self.workspace)

    @property
    def model_requests(self) -> list[ModelRequest]:
        return list(getattr(self.model, "requests", []))


def make_settings(home: Path, **overrides: Any) -> Settings:
    base: dict[str, Any] = {"api_key": "test-key", "retry_base_delay": 0.0}
    base.update(overrides)
    return Settings(home=home, **base)


@asynccontextmanager
async def open_agent(
    tmp_path: Path,
    model: ModelClient | Iterable[Any] | None = None,
    *,
    settings: Settings | None = None,
    store: SessionStore | None = None,
    versioned: bool = False,
) -> AsyncIterator[AgentClient]:
    """Run an agent on an in-memory connection for the duration of the block.

    ``versioned`` wires it as ``iac-code acp`` does (``route_versions``: a negotiated peer
    and the versioned router), so the test's ``initialize`` may negotiate either version;
    otherwise the agent talks v1 straight to the connection.

    ``model`` is a ``ModelClient`` or a script for :class:`ScriptedModelClient` (played
    without its scripted delays). The workspace is ``tmp_path / "ws"``; state lives in
    ``tmp_path / "home"`` unless ``settings`` says otherwise.
    """
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    settings = settings or make_settings(tmp_path / "home")
    client: ModelClient = (
        model if isinstance(model, ModelClient) else ScriptedModelClient(model, timing=False)
    )
    to_agent, agent_input = memory_byte_pipe()
    agent_output, from_agent = memory_byte_pipe()
    connection = Connection(agent_input, agent_output, None)
    sessions = store or SessionStore(settings.home)
    if versioned:
        agent, connection.handler = route_versions(
            connection, lambda out: IacAgent(settings, out, sessions, model_client=client)
        )
    else:
        agent = IacAgent(settings, connection, sessions, model_client=client)
        connection.handler = Router(agent)
    async with (
        anyio.create_task_group() as group,
        open_pipe_client(
            to_agent.send, from_agent.receive, refuse_unhandled=False, wait_s=READ_TIMEOUT
        ) as wire,
    ):
        group.start_soon(connection.serve)
        try:
            yield AgentClient(wire=wire, agent=agent, model=client, workspace=workspace)
        finally:
            with anyio.fail_after(READ_TIMEOUT):
                await agent.shutdown()
                to_agent.close()
                await wire.wait_closed()
        # Reached when the test passed: everything the agent wrote was a JSON object.
        for frame in wire.frames:
            assert isinstance(frame, dict), f"the agent wrote a non-object frame: {frame!r}"
            assert "__unparsable__" not in frame, f"the agent wrote a non-JSON line: {frame}"


class StallingModelClient:
    """First call streams ``pieces`` of text and then hangs until cancelled.

    Later calls go to ``then`` (a scripted client by default, which echoes). Every request is
    recorded in :attr:`requests`, the stalled one included.
    """

    def __init__(self, pieces: Iterable[str], then: ScriptedModelClient | None = None) -> None:
        self.pieces = list(pieces)
        self.then = then or ScriptedModelClient(timing=False)
        self.requests: list[ModelRequest] = []
        self.stalled = anyio.Event()
        self._calls = 0

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        self._calls += 1
        if self._calls == 1:
            return self._stall(request)
        return self._delegate(request)

    async def _stall(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        for piece in self.pieces:
            yield TextDelta(piece)
        self.stalled.set()
        await anyio.sleep_forever()

    async def _delegate(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        async for event in self.then.stream(request):
            yield event


def message_texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content if b.get("type") == "text"]


def read_events(
    home: Path, session_id: str, *, with_partials: bool = False
) -> list[dict[str, Any]]:
    """The session's event log straight from disk (a fresh store, no caches).

    The write-ahead ``partial_reply`` events (one per streamed chunk) are left out unless
    asked for: most tests look at the conversation, not at the stream's journal.
    """
    events = SessionStore(home).load_events(session_id)
    if with_partials:
        return events
    return [event for event in events if event.get("type") != "partial_reply"]


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
