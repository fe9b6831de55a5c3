"""A small remote ACP client for the bench: Streamable HTTP (POST + SSE) or one WebSocket.

It keeps exactly what the measurements need: answers by id, the arrival time of each
``agent_message_chunk`` per session, and automatic answers to agent requests (on the stream
they came from). ``iac-code acp --transport http`` runs as a real subprocess; the clients run
in this process's event loop. It stays apart from the tests' client (timing is its job) but
parses SSE with the same parser.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup

from ..wire_client.sse_events import aiter_sse
from ._client import HarnessError
from .context import INITIALIZE_PARAMS, BenchContext, Workspace

__all__ = [
    "HttpSession",
    "RemoteServer",
    "WsSession",
    "http_session",
    "remote_server",
    "ws_session",
]


@dataclass
class RemoteServer:
    url: str
    pid: int

    @property
    def ws_url(self) -> str:
        return "ws" + self.url.removeprefix("http")


@contextmanager
def remote_server(ctx: BenchContext, workspace: Workspace, llm_url: str) -> Iterator[RemoteServer]:
    """``iac-code acp --transport http --port 0`` as a subprocess; SIGTERM on exit."""
    argv = [*ctx.agent_argv, "--transport", "http", "--port", "0"]
    stderr_path = workspace.root / "remote-server.stderr"
    with stderr_path.open("w+b") as stderr:
        process = subprocess.Popen(
            argv,
            env=ctx.environment(workspace, llm_url),
            cwd=workspace.project,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            yield RemoteServer(_announced_url(stderr_path, process, ctx.timeout), process.pid)
        finally:
            process.terminate()
            try:
                process.wait(timeout=ctx.timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _announced_url(path: Any, process: subprocess.Popen[bytes], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in path.read_text(errors="replace").splitlines():
            if "serving ACP on " in line:
                return line.rsplit(" ", 1)[1]
        if process.poll() is not None:
            raise HarnessError(f"the HTTP server exited: {path.read_text(errors='replace')}")
        time.sleep(0.01)
    raise HarnessError("the HTTP server did not announce its address in time")


@dataclass
class _Peer:
    timeout: float
    answers: dict[Any, dict[str, Any]] = field(default_factory=dict)
    chunk_times: dict[str, list[float]] = field(default_factory=dict)
    chunk_text: dict[str, list[str]] = field(default_factory=dict)
    _changed: anyio.Event = field(default_factory=anyio.Event)
    _next_id: int = 0

    async def dispatch(self, message: dict[str, Any], stream: str | None) -> None:
        if "method" not in message:
            self.answers[message.get("id")] = message
        elif "id" in message:
            await self.send(_allow(message), stream)
        elif message.get("method") == "session/update":
            params = message["params"]
            update = params.get("update", {})
            if update.get("sessionUpdate") == "agent_message_chunk":
                sid = params["sessionId"]
                self.chunk_times.setdefault(sid, []).append(time.perf_counter())
                self.chunk_text.setdefault(sid, []).append(update["content"].get("text", ""))
        self._changed.set()
        self._changed = anyio.Event()

    async def send(self, message: dict[str, Any], stream: str | None) -> None:
        raise NotImplementedError

    async def call(self, method: str, params: dict[str, Any], session: str | None = None) -> Any:
        self._next_id += 1
        request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.send(message, session)
        with anyio.fail_after(self.timeout):
            while request_id not in self.answers:
                await self._changed.wait()
        answer = self.answers.pop(request_id)
        if "error" in answer:
            raise HarnessError(f"{method} failed: {answer['error']}")
        return answer["result"]


def _allow(request: dict[str, Any]) -> dict[str, Any]:
    options = (request.get("params") or {}).get("options") or []
    chosen = next((o for o in options if o.get("kind") == "allow_once"), None)
    if chosen is None:
        result: dict[str, Any] = {"outcome": {"outcome": "cancelled"}}
    else:
        result = {"outcome": {"outcome": "selected", "optionId": chosen["optionId"]}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


@dataclass
class HttpSession(_Peer):
    url: str = ""
    http: httpx.AsyncClient | None = None
    group: TaskGroup | None = None
    connection_id: str = ""

    def _headers(self, session: str | None = None) -> dict[str, str]:
        headers = {"content-type": "application/json", "acp-connection-id": self.connection_id}
        if session is not None:
            headers["acp-session-id"] = session
        return headers

    async def initialize(self) -> None:
        assert self.http is not None
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE_PARAMS}
        response = await self.http.post(self.url, json=body)
        if response.status_code != 200:
            raise HarnessError(f"initialize answered {response.status_code}: {response.text}")
        self.connection_id = response.headers["acp-connection-id"]

    async def send(self, message: dict[str, Any], stream: str | None) -> None:
        assert self.http is not None
        response = await self.http.post(
            self.url, content=json.dumps(message), headers=self._headers(stream)
        )
        if response.status_code != 202:
            raise HarnessError(f"POST answered {response.status_code}: {response.text}")

    async def open_stream(self, session: str | None = None) -> None:
        assert self.group is not None
        await self.group.start(self._read, session)

    async def _read(self, session: str | None, *, task_status: Any) -> None:
        assert self.http is not None
        headers = self._headers(session)
        headers["accept"] = "text/event-stream"
        async with self.http.stream("GET", self.url, headers=headers) as response:
            if response.status_code != 200:
                raise HarnessError(f"GET answered {response.status_code}")
            task_status.started()
            async for event in aiter_sse(response.aiter_lines()):
                await self.dispatch(event.message, session)

    async def new_session(self, cwd: str) -> str:
        result = await self.call("session/new", {"cwd": cwd, "mcpServers": []})
        session_id = str(result["sessionId"])
        await self.open_stream(session_id)
        return session_id

    async def close(self) -> None:
        assert self.http is not None
        await self.http.delete(self.url, headers=self._headers())


@asynccontextmanager
async def http_session(url: str, bound: float) -> AsyncIterator[HttpSession]:
    limits = httpx.Timeout(bound, read=None)
    async with httpx.AsyncClient(timeout=limits) as http, anyio.create_task_group() as group:
        session = HttpSession(timeout=bound, url=url, http=http, group=group)
        await session.initialize()
        await session.open_stream()
        try:
            yield session
        finally:
            group.cancel_scope.cancel()


@dataclass
class WsSession(_Peer):
    socket: Any = None

    async def send(self, message: dict[str, Any], stream: str | None) -> None:
        del stream
        await self.socket.send(json.dumps(message))

    async def read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for frame in self.socket:
                await self.dispatch(json.loads(frame), None)
        except ConnectionClosed:
            return

    async def new_session(self, cwd: str) -> str:
        result = await self.call("session/new", {"cwd": cwd, "mcpServers": []})
        return str(result["sessionId"])


@asynccontextmanager
async def ws_session(ws_url: str, bound: float) -> AsyncIterator[WsSession]:
    from websockets.asyncio.client import connect

    async with (
        connect(ws_url, open_timeout=bound, max_size=None) as socket,
        anyio.create_task_group() as group,
    ):
        session = WsSession(timeout=bound, socket=socket)
        group.start_soon(session.read)
        await session.call("initialize", INITIALIZE_PARAMS)
        try:
            yield session
        finally:
            group.cancel_scope.cancel()
