"""The wire client over ACP's remote transport: Streamable HTTP (POST + SSE) or a WebSocket.

Both speak the transport the way the official SDK clients do. Over HTTP every message is a
POST (``Acp-Connection-Id`` once ``initialize`` answered it, ``Acp-Session-Id`` for a
session's messages); answers, updates and agent requests arrive on SSE streams (the
connection stream, and one per session: :meth:`HttpTransport.open_stream`), and an agent
request is answered on the stream it came on. Over a WebSocket every message is one text
frame. Either way the client is the same :class:`~.rpc_client.WireClient`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import httpx

from .rpc_client import TIMEOUT, Handler, WireClient, WireError, allow_once
from .sse_events import aiter_sse

__all__ = ["HttpTransport", "WebSocketTransport", "open_http_client", "open_ws_client"]


@dataclass
class HttpTransport:
    """Streamable HTTP: POST messages, one SSE reader task per open stream."""

    url: str
    http: httpx.AsyncClient
    group: anyio.abc.TaskGroup
    headers: dict[str, str] = field(default_factory=dict)
    connection_id: str | None = None
    client: WireClient | None = None
    #: Open the connection stream as soon as ``initialize`` answered.
    open_connection_stream: bool = True
    #: Open a session's stream before handing over the answer to the ``session/new`` that
    #: created it.
    open_session_streams: bool = True
    stream_scopes: dict[str | None, anyio.CancelScope] = field(default_factory=dict)
    last_ids: dict[str | None, int] = field(default_factory=dict)
    seen_ids: dict[str | None, list[int]] = field(default_factory=dict)
    _new_session_ids: set[Any] = field(default_factory=set)

    def request_headers(self, session_id: str | None = None, **extra: str) -> dict[str, str]:
        headers = {"content-type": "application/json", **self.headers, **extra}
        if self.connection_id is not None:
            headers["acp-connection-id"] = self.connection_id
        if session_id is not None:
            headers["acp-session-id"] = session_id
        return headers

    async def post(self, message: Any, session_id: str | None = None) -> httpx.Response:
        """POST a message as it is; the response is the caller's to judge."""
        return await self.http.post(
            self.url, content=json.dumps(message), headers=self.request_headers(session_id)
        )

    async def send(self, message: Any, stream: str | None) -> None:
        """The client's send: ``initialize`` is answered in the POST's body (200, with the
        connection id); every other message is accepted with 202."""
        assert self.client is not None
        first = self.connection_id is None
        if isinstance(message, dict) and message.get("method") == "session/new":
            self._new_session_ids.add(message.get("id"))
        response = await self.post(message, stream)
        if first and isinstance(message, dict) and message.get("method") == "initialize":
            if response.status_code != 200:
                raise WireError(f"initialize answered {response.status_code}: {response.text}")
            self.connection_id = response.headers["acp-connection-id"]
            if self.open_connection_stream:
                await self.open_stream(None)
            self.client.deliver(response.json(), None)
        elif response.status_code != 202:
            raise WireError(f"POST answered {response.status_code}: {response.text}")

    async def open_stream(self, session_id: str | None, *, resume: bool = False) -> None:
        """Start reading a stream (the connection's, or a session's); returns once the server
        answered 200. ``resume`` sends ``Last-Event-ID`` with the last id seen on it."""
        await self.group.start(self._read_stream, session_id, resume)

    def _opens_a_session(self, message: Any) -> bool:
        if not (isinstance(message, dict) and "method" not in message):
            return False
        if message.get("id") not in self._new_session_ids:
            return False
        self._new_session_ids.discard(message.get("id"))
        result = message.get("result")
        return self.open_session_streams and isinstance(result, dict) and "sessionId" in result

    def drop_stream(self, session_id: str | None) -> None:
        """Break a stream from the client's side, as a dropped HTTP connection does."""
        self.stream_scopes.pop(session_id).cancel()

    async def _read_stream(self, session_id: str | None, resume: bool, *, task_status: Any) -> None:
        assert self.client is not None
        extra = {"accept": "text/event-stream"}
        if resume and session_id in self.last_ids:
            extra["last-event-id"] = str(self.last_ids[session_id])
        headers = self.request_headers(session_id, **extra)
        headers.pop("content-type")
        with anyio.CancelScope() as scope:
            self.stream_scopes[session_id] = scope
            async with self.http.stream("GET", self.url, headers=headers) as response:
                if response.status_code != 200:
                    raise WireError(f"GET of a stream answered {response.status_code}")
                task_status.started()
                async for event in aiter_sse(response.aiter_lines()):
                    event_id = event.event_id
                    if event_id is not None:  # our server always sends ids; the SDK's does not
                        self.last_ids[session_id] = event_id
                        self.seen_ids.setdefault(session_id, []).append(event_id)
                    message = event.message
                    if self._opens_a_session(message):
                        await self.open_stream(message["result"]["sessionId"])
                    self.client.deliver(message, session_id)
        self.stream_scopes.pop(session_id, None)
        self.client.changed()

    async def delete(self) -> httpx.Response:
        """End the connection (``DELETE``)."""
        return await self.http.delete(self.url, headers=self.request_headers())


@contextlib.asynccontextmanager
async def open_http_client(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    handlers: Mapping[str, Handler] | None = None,
    wait_s: float = TIMEOUT,
    capabilities: Mapping[str, Any] | None = None,
    open_connection_stream: bool = True,
    open_session_streams: bool = True,
    http: httpx.AsyncClient | None = None,
) -> AsyncIterator[WireClient]:
    """A client of the Streamable HTTP endpoint ``url`` for the duration of the block.

    Send ``initialize`` first. The transport (``client.transport``, an :class:`HttpTransport`)
    opens the connection stream then, and each new session's stream before ``session/new``
    returns (unless told not to); :meth:`HttpTransport.open_stream` opens others
    (a loaded session's, before ``session/load``, as the SDK client does). ``http`` is the
    HTTP client to use (an HTTP/2 one, say); by default one of its own."""
    async with contextlib.AsyncExitStack() as stack:
        if http is None:
            limits = httpx.Timeout(wait_s, read=None)
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=limits))
        group = await stack.enter_async_context(anyio.create_task_group())
        transport = HttpTransport(
            url,
            http,
            group,
            dict(headers or {}),
            open_connection_stream=open_connection_stream,
            open_session_streams=open_session_streams,
        )
        client = WireClient(
            transport.send,
            handlers={"session/request_permission": allow_once, **(handlers or {})},
            wait_s=wait_s,
            capabilities=capabilities,
            transport=transport,
        )
        transport.client = client
        client.attach(group)
        try:
            yield client
        finally:
            group.cancel_scope.cancel()


@dataclass
class WebSocketTransport:
    """One WebSocket: one JSON-RPC message per text frame, both ways."""

    socket: Any
    connection_id: str | None = None

    async def send(self, message: Any, stream: str | None) -> None:
        del stream  # one socket carries every session
        await self.socket.send(json.dumps(message))

    async def read_into(self, client: WireClient) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for frame in self.socket:
                client.deliver(json.loads(frame), None)
        except ConnectionClosed:
            pass
        finally:
            client.end()


@contextlib.asynccontextmanager
async def open_ws_client(
    ws_url: str,
    *,
    headers: Mapping[str, str] | None = None,
    handlers: Mapping[str, Handler] | None = None,
    wait_s: float = TIMEOUT,
    capabilities: Mapping[str, Any] | None = None,
    max_size: int | None = 1 << 20,
) -> AsyncIterator[WireClient]:
    """A client of the WebSocket endpoint ``ws_url`` for the duration of the block."""
    from websockets.asyncio.client import connect

    async with connect(
        ws_url, additional_headers=dict(headers or {}), open_timeout=wait_s, max_size=max_size
    ) as socket:
        assert socket.response is not None
        transport = WebSocketTransport(socket, socket.response.headers.get("acp-connection-id"))
        client = WireClient(
            transport.send,
            handlers={"session/request_permission": allow_once, **(handlers or {})},
            wait_s=wait_s,
            capabilities=capabilities,
            transport=transport,
        )
        async with anyio.create_task_group() as group:
            client.attach(group)
            group.start_soon(transport.read_into, client)
            try:
                yield client
            finally:
                group.cancel_scope.cancel()
