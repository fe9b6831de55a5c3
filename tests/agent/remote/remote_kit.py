"""Test kit for the remote transport: a real Hypercorn server on 127.0.0.1 in the test's event
loop, and small HTTP/SSE and WebSocket clients that speak the transport the way the official
SDK clients do (answers routed by id, agent requests answered on the right stream).
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup
from hypercorn.asyncio import serve
from hypercorn.config import Config
from iac_code.remote.app import build_app
from iac_code.remote.options import RemoteLimits, RemoteOptions
from iac_code.remote.registry import ConnectionRegistry
from iac_code.remote.remote_connection import HandlerFactory
from iac_code.remote.serve import agent_handler_factory
from iac_code.settings import Settings

TIMEOUT = 15.0
INIT = {"protocolVersion": 1, "clientCapabilities": {"fs": {}, "terminal": False}}


def agent_settings(home: Path, llm_url: str) -> Settings:
    return Settings(home=home, api_key="test-key", base_url=llm_url, retry_base_delay=0.01)


@dataclass
class RunningServer:
    url: str
    registry: ConnectionRegistry

    @property
    def ws_url(self) -> str:
        return "ws" + self.url.removeprefix("http")


@asynccontextmanager
async def running_server(
    make_handler: HandlerFactory, options: RemoteOptions | None = None
) -> AsyncIterator[RunningServer]:
    """Hypercorn serving the app on an ephemeral loopback port, stopped on exit."""
    options = options or RemoteOptions()
    app, registry = build_app(make_handler, options)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]  # Hypercorn owns (and closes) the descriptor
    config.accesslog = None
    config.graceful_timeout = 1.0
    config.websocket_max_message_size = options.limits.max_body_bytes
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_serve, app, config, stop)
        # The socket listens already: requests queue until Hypercorn accepts them.
        url = f"http://127.0.0.1:{port}/acp"
        try:
            yield RunningServer(url, registry)
        finally:
            stop.set()


async def _serve(app: Any, config: Config, stop: anyio.Event) -> None:
    await serve(app, config, shutdown_trigger=stop.wait)


@asynccontextmanager
async def agent_server(
    home: Path, llm_url: str, limits: RemoteLimits | None = None, **options: Any
) -> AsyncIterator[RunningServer]:
    remote = RemoteOptions(limits=limits or RemoteLimits(), **options)
    async with running_server(agent_handler_factory(agent_settings(home, llm_url)), remote) as s:
        yield s


# ---------------------------------------------------------------------- SSE parsing


@dataclass
class SseEvent:
    id: int | None
    message: dict[str, Any]


async def iter_sse(response: httpx.Response) -> AsyncIterator[SseEvent]:
    event_id: int | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield SseEvent(event_id, json.loads("\n".join(data)))
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = int(line[3:].strip())
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


# ---------------------------------------------------------------------- clients


def allow_once(request: dict[str, Any]) -> dict[str, Any]:
    options = request["params"]["options"]
    chosen = next(o for o in options if o["kind"] == "allow_once")
    return {"outcome": {"outcome": "selected", "optionId": chosen["optionId"]}}


@dataclass
class _Peer:
    """What both clients share: answers by id, updates by session, agent requests answered."""

    on_request: Callable[[dict[str, Any]], dict[str, Any]] = allow_once
    updates: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    agent_requests: list[dict[str, Any]] = field(default_factory=list)
    agent_request_streams: list[str | None] = field(default_factory=list)
    _answers: dict[Any, dict[str, Any]] = field(default_factory=dict)
    _changed: anyio.Event = field(default_factory=anyio.Event)
    _next_id: int = 100

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def dispatch(self, message: dict[str, Any], session_id: str | None) -> None:
        if "method" not in message:
            self._answers[message.get("id")] = message
        elif "id" in message:
            self.agent_requests.append(message)
            self.agent_request_streams.append(session_id)
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": self.on_request(message)}
            await self.send(answer, session_id)
        elif message["method"] == "session/update":
            sid = message["params"]["sessionId"]
            self.updates.setdefault(sid, []).append(message["params"]["update"])
        self.notify()

    def notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def send(self, message: dict[str, Any], session_id: str | None) -> None:
        raise NotImplementedError

    async def answer(self, request_id: Any) -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT):
            while request_id not in self._answers:
                await self._changed.wait()
        return self._answers.pop(request_id)

    async def call(self, method: str, params: dict[str, Any], session_id: str | None = None) -> Any:
        request_id = self.new_id()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.send(message, session_id)
        answer = await self.answer(request_id)
        if "error" in answer:
            raise AssertionError(f"{method} failed: {answer['error']}")
        return answer["result"]

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        with anyio.fail_after(TIMEOUT):
            while not predicate():
                await self._changed.wait()

    def text_of(self, session_id: str) -> str:
        return "".join(
            u["content"].get("text", "")
            for u in self.updates.get(session_id, [])
            if u.get("sessionUpdate") == "agent_message_chunk"
        )


@dataclass
class HttpClient(_Peer):
    """Streamable HTTP: POST messages, one SSE reader per stream in ``group``."""

    url: str = ""
    http: httpx.AsyncClient | None = None
    group: TaskGroup | None = None
    connection_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    stream_scopes: dict[str | None, anyio.CancelScope] = field(default_factory=dict)
    last_ids: dict[str | None, int] = field(default_factory=dict)
    seen_ids: dict[str | None, list[int]] = field(default_factory=dict)

    def _headers(self, session_id: str | None = None, **extra: str) -> dict[str, str]:
        headers = {"content-type": "application/json", **self.headers, **extra}
        if self.connection_id is not None:
            headers["acp-connection-id"] = self.connection_id
        if session_id is not None:
            headers["acp-session-id"] = session_id
        return headers

    async def initialize(self, open_stream: bool = True) -> dict[str, Any]:
        assert self.http is not None
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
        response = await self.http.post(self.url, json=body, headers=self._headers())
        assert response.status_code == 200, response.text
        self.connection_id = response.headers["acp-connection-id"]
        if open_stream:
            await self.open_stream(None)
        return response.json()["result"]

    async def post(self, message: Any, session_id: str | None = None) -> httpx.Response:
        assert self.http is not None
        return await self.http.post(
            self.url, content=json.dumps(message), headers=self._headers(session_id)
        )

    async def send(self, message: dict[str, Any], session_id: str | None) -> None:
        response = await self.post(message, session_id)
        assert response.status_code == 202, (response.status_code, response.text)

    async def open_stream(self, session_id: str | None, *, resume: bool = False) -> None:
        """Start reading a stream; returns once the server answered 200."""
        assert self.group is not None
        await self.group.start(self._read_stream, session_id, resume)

    def drop_stream(self, session_id: str | None) -> None:
        self.stream_scopes.pop(session_id).cancel()

    async def _read_stream(self, session_id: str | None, resume: bool, *, task_status: Any) -> None:
        assert self.http is not None
        extra = {"accept": "text/event-stream"}
        if resume and session_id in self.last_ids:
            extra["last-event-id"] = str(self.last_ids[session_id])
        headers = self._headers(session_id, **extra)
        headers.pop("content-type")
        with anyio.CancelScope() as scope:
            self.stream_scopes[session_id] = scope
            async with self.http.stream("GET", self.url, headers=headers) as response:
                assert response.status_code == 200, response.status_code
                task_status.started()
                async for event in iter_sse(response):
                    if event.id is not None:  # our server always sends ids; the SDK's does not
                        self.last_ids[session_id] = event.id
                        self.seen_ids.setdefault(session_id, []).append(event.id)
                    await self.dispatch(event.message, session_id)
        self.stream_scopes.pop(session_id, None)
        self.notify()

    async def new_session(self, cwd: Path) -> str:
        result = await self.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id: str = result["sessionId"]
        await self.open_stream(session_id)
        return session_id

    async def delete(self) -> httpx.Response:
        assert self.http is not None
        return await self.http.delete(self.url, headers=self._headers())


@asynccontextmanager
async def http_client(url: str, **headers: str) -> AsyncIterator[HttpClient]:
    timeout = httpx.Timeout(TIMEOUT, read=None)
    async with httpx.AsyncClient(timeout=timeout) as http, anyio.create_task_group() as group:
        client = HttpClient(url=url, http=http, group=group, headers=headers)
        try:
            yield client
        finally:
            group.cancel_scope.cancel()


@dataclass
class WsClient(_Peer):
    """One WebSocket: JSON-RPC text frames both ways."""

    socket: Any = None
    connection_id: str | None = None

    async def send(self, message: dict[str, Any], session_id: str | None) -> None:
        del session_id  # one socket carries every session
        await self.socket.send(json.dumps(message))

    async def initialize(self) -> dict[str, Any]:
        request_id = self.new_id()
        body = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": INIT}
        await self.send(body, None)
        answer = await self.answer(request_id)
        return answer["result"]

    async def new_session(self, cwd: Path) -> str:
        result = await self.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        return str(result["sessionId"])

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for frame in self.socket:
                await self.dispatch(json.loads(frame), None)
        except ConnectionClosed:
            pass


@asynccontextmanager
async def ws_client(ws_url: str, **headers: str) -> AsyncIterator[WsClient]:
    from websockets.asyncio.client import connect

    async with connect(ws_url, additional_headers=headers, open_timeout=TIMEOUT) as socket:
        client = WsClient(socket=socket)
        client.connection_id = socket.response.headers.get("acp-connection-id")
        async with anyio.create_task_group() as group:
            group.start_soon(client._read)
            try:
                yield client
            finally:
                group.cancel_scope.cancel()
