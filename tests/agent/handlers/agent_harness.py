"""An in-memory ACP client wired to a real ``IacAgent``, for the agent tests.

The agent runs behind the real ``Router`` and ``Connection``; the test side is a
:class:`~iac_code.rpc.memory.RawPeer`, so every assertion is about the frames that would be
on the wire. Every frame read is kept in :attr:`AgentClient.received` in arrival order, which
lets tests check ordering ("all updates before the response", "nothing after it").
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from iac_code.agent.acp_agent import IacAgent
from iac_code.llm.contract import ModelClient, ModelRequest, StreamEvent, TextDelta
from iac_code.router import Router
from iac_code.rpc.framing import encode_message
from iac_code.rpc.memory import RawPeer, raw_peer_connection
from iac_code.settings import Settings
from iac_code.store import SessionStore
from iac_code.versioned_router import route_versions
from iac_code_dev.fake_llm import ScriptedModelClient

Frame = dict[str, Any]
READ_TIMEOUT = 5.0


@dataclass
class Reply:
    """A response frame plus the ``session/update`` params that arrived before it."""

    frame: Frame
    updates: list[dict[str, Any]]
    index: int  # position of the response in AgentClient.received

    @property
    def result(self) -> Any:
        assert "result" in self.frame, f"expected a result, got {self.frame}"
        return self.frame["result"]

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.frame, f"expected an error, got {self.frame}"
        return self.frame["error"]

    def kinds(self) -> list[str]:
        return [u["update"]["sessionUpdate"] for u in self.updates]


def is_update(frame: Frame) -> bool:
    return frame.get("method") == "session/update"


@dataclass
class AgentClient:
    """The client side of an in-memory connection to the agent."""

    peer: RawPeer
    agent: IacAgent
    model: ModelClient
    workspace: Path
    received: list[Frame] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _sent_at: dict[Any, int] = field(default_factory=dict)

    # ------------------------------------------------------------------ sending

    async def send(self, method: str, params: Any = None, *, request_id: Any = None) -> Any:
        """Send a request and return its id (without waiting for the answer)."""
        if request_id is None:
            request_id = next(self._ids)
        message: Frame = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._sent_at[request_id] = len(self.received)
        await self.peer.send(message)
        return request_id

    async def notify(self, method: str, params: Any = None) -> None:
        message: Frame = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.peer.send(message)

    async def send_together(self, *messages: Frame) -> None:
        """Write several frames in one chunk, so the agent reads them in one go."""
        for message in messages:
            if "id" in message and "method" in message:
                self._sent_at[message["id"]] = len(self.received)
        await self.peer.send_bytes(b"".join(encode_message(m) for m in messages))

    # ------------------------------------------------------------------ receiving

    async def _pull(self) -> Frame:
        frame = await self.peer.receive()
        assert isinstance(frame, dict), f"the agent wrote a non-object frame: {frame!r}"
        self.received.append(frame)
        return frame

    async def wait_for(self, predicate: Callable[[Frame], bool], *, start: int = 0) -> int:
        """Index of the first frame from ``start`` on that matches, reading as needed."""
        position = start
        with anyio.fail_after(READ_TIMEOUT):
            while True:
                while position < len(self.received):
                    if predicate(self.received[position]):
                        return position
                    position += 1
                await self._pull()

    async def reply(self, request_id: Any) -> Reply:
        start = self._sent_at.get(request_id, 0)
        index = await self.wait_for(
            lambda f: f.get("id") == request_id and "method" not in f, start=start
        )
        updates = [f["params"] for f in self.received[start:index] if is_update(f)]
        return Reply(self.received[index], updates, index)

    async def call(self, method: str, params: Any = None) -> Reply:
        return await self.reply(await self.send(method, params))

    async def wait_update(self, kind: str, *, start: int = 0) -> tuple[int, dict[str, Any]]:
        """The first ``session/update`` of ``kind`` at or after ``start``: (index, params)."""
        index = await self.wait_for(
            lambda f: is_update(f) and f["params"]["update"]["sessionUpdate"] == kind,
            start=start,
        )
        return index, self.received[index]["params"]

    async def barrier(self) -> int:
        """Round-trip a cheap request; every frame queued before it is then in ``received``."""
        return (await self.call("session/list", {})).index

    def updates_between(self, start: int, end: int, session_id: str) -> list[dict[str, Any]]:
        return [
            f["params"]["update"]
            for f in self.received[start:end]
            if is_update(f) and f["params"]["sessionId"] == session_id
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
        return await self.call(
            "session/load",
            {"sessionId": session_id, "cwd": str(cwd or self.workspace), "mcpServers": []},
        )

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
    connection, peer = raw_peer_connection(None)
    sessions = store or SessionStore(settings.home)
    if versioned:
        agent, connection.handler = route_versions(
            connection, lambda out: IacAgent(settings, out, sessions, model_client=client)
        )
    else:
        agent = IacAgent(settings, connection, sessions, model_client=client)
        connection.handler = Router(agent)
    harness = AgentClient(peer=peer, agent=agent, model=client, workspace=workspace)
    async with anyio.create_task_group() as group:
        group.start_soon(connection.serve)
        try:
            yield harness
        finally:
            with anyio.fail_after(5):
                await agent.shutdown()
                peer.close_input()
                await peer.receive_until_eof()


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


def read_events(home: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's event log straight from disk (a fresh store, no caches)."""
    return SessionStore(home).load_events(session_id)


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
