"""``/acp`` as a WebSocket: GET with ``Upgrade: websocket`` → 101 + ``Acp-Connection-Id``.

After the handshake both directions carry JSON-RPC messages, one per text frame. The first
client message must be ``initialize`` (anything else closes with 1002); a second
``initialize``, a batch array, a non-object or a binary frame is answered with a JSON-RPC
error frame (-32700 for invalid JSON, -32600 otherwise) and the socket stays open.
Everything the agent writes goes out on the socket in order, through the connection's one
stream, so transport answers and agent output never interleave mid-frame.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from iac_code.remote.guard import deny_websocket, request_principal
from iac_code.remote.protocol import has_lone_surrogate_id, loads_message, message_key
from iac_code.remote.registry import ConnectionRegistry, TooManyConnections
from iac_code.remote.remote_connection import ConnectionGone, RemoteConnection
from iac_code.remote.responses import PARSE_ERROR, error_body
from iac_code.remote.streams import StreamReader
from iac_code.remote.ws_batches import SEND_MANY

__all__ = ["AcpWebSocketEndpoint"]

log = logging.getLogger("iac_code.remote")

CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_PROTOCOL_ERROR = 1002
#: At most this many queued messages go out in one write (a bounded write, and the reader of
#: a long backlog still sees frames arrive as they are written).
BURST_FRAMES = 64


class AcpWebSocketEndpoint:
    def __init__(self, registry: ConnectionRegistry) -> None:
        self.registry = registry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        socket = WebSocket(scope, receive, send)
        # The server frames a burst of messages in one write when it offers to (ws_batches).
        send_many = send if SEND_MANY in (scope.get("extensions") or {}) else None
        try:
            connection = await self.registry.create("websocket", request_principal(scope))
        except TooManyConnections:
            await _deny(scope, receive, send, 503, "Connection limit reached")
            return
        try:
            await socket.accept(headers=[(b"acp-connection-id", connection.id.encode())])
            await self._serve(socket, connection, send_many)
        except WebSocketDisconnect:
            pass
        finally:
            connection.close()

    async def _serve(
        self, socket: WebSocket, connection: RemoteConnection, send_many: Send | None
    ) -> None:
        if not await self._initialize(socket, connection):
            return
        reader = connection.connection_stream.attach()
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(
                    self._write_frames, socket, connection, reader, group.cancel_scope, send_many
                )
                await self._read_frames(socket, connection)
                group.cancel_scope.cancel()
        finally:
            connection.connection_stream.detach(reader)

    async def _initialize(self, socket: WebSocket, connection: RemoteConnection) -> bool:
        message = await self._receive_message(socket, connection, before_initialize=True)
        if message is None:
            return False
        if message.get("method") != "initialize" or message_key(message.get("id")) is None:
            await socket.close(CLOSE_PROTOCOL_ERROR, "the first message must be initialize")
            return False
        try:
            with anyio.move_on_after(self.registry.limits.initialize_timeout_seconds):
                answer = await connection.initialize(message)
                await socket.send_text(json.dumps(answer, separators=(",", ":")))
                if "result" in answer:
                    return True
        except ConnectionGone:
            pass
        await socket.close(CLOSE_PROTOCOL_ERROR, "initialize failed")
        return False

    async def _receive_message(
        self, socket: WebSocket, connection: RemoteConnection, *, before_initialize: bool = False
    ) -> dict[str, Any] | None:
        """The next frame as a message object; refusals are answered here. None = closed."""
        while True:
            frame = await socket.receive()
            if frame["type"] == "websocket.disconnect":
                return None
            text = frame.get("text")
            if text is None:
                await self._refuse(
                    socket, connection, "binary frames are not supported", before_initialize
                )
                continue
            try:
                value = loads_message(text)
            except (ValueError, RecursionError):
                await self._refuse(
                    socket, connection, "invalid JSON", before_initialize, PARSE_ERROR
                )
                continue
            if isinstance(value, list):
                await self._refuse(
                    socket, connection, "JSON-RPC batches are not supported", before_initialize
                )
                continue
            if not isinstance(value, dict):
                await self._refuse(
                    socket, connection, "a message must be a JSON object", before_initialize
                )
                continue
            if has_lone_surrogate_id(value):
                await self._refuse(
                    socket, connection, "the id holds a lone UTF-16 surrogate", before_initialize
                )
                continue
            return value

    async def _refuse(
        self,
        socket: WebSocket,
        connection: RemoteConnection,
        message: str,
        before_initialize: bool,
        code: int = -32600,
    ) -> None:
        body = error_body(message, code)
        if before_initialize:
            await socket.send_text(json.dumps(body))  # nothing else writes yet
        else:
            connection.push_local(body)

    async def _read_frames(self, socket: WebSocket, connection: RemoteConnection) -> None:
        while True:
            message = await self._receive_message(socket, connection)
            if message is None:
                return
            if message.get("method") == "initialize" and "id" in message:
                reply = error_body("initialize is not allowed on an existing connection")
                reply["id"] = message.get("id")
                connection.push_local(reply)
                continue
            try:
                await connection.send(message)
            except ConnectionGone:
                return

    async def _write_frames(
        self,
        socket: WebSocket,
        connection: RemoteConnection,
        reader: StreamReader,
        done: anyio.CancelScope,
        send_many: Send | None,
    ) -> None:
        stream = connection.connection_stream
        while True:
            event = await stream.next_event(reader)
            if event is None:
                break
            if send_many is None:
                await socket.send_text(event.data.decode("utf-8"))
                continue
            # Whatever else is queued goes out with it, in one write.
            burst = [event, *stream.ready_events(reader, BURST_FRAMES - 1)]
            texts = [queued.data.decode("utf-8") for queued in burst]
            await send_many({"type": SEND_MANY, "texts": texts})
        # The connection ended (DELETE is HTTP-only: so idle close or server shutdown).
        if socket.application_state == WebSocketState.CONNECTED:
            code = CLOSE_GOING_AWAY if self.registry.shutting_down else CLOSE_NORMAL
            await socket.close(code)
        done.cancel()


async def _deny(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    await receive()  # the handshake's websocket.connect
    await deny_websocket(scope, send, status, message, {"retry-after": "5"})
