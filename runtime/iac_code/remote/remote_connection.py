"""One remote ACP connection: the agent's own :class:`Connection`, fed messages directly.

Inbound, each client message (already decoded by the HTTP or WebSocket endpoint) is queued
for the agent connection as it is: no NDJSON line is written and parsed again. Outbound, the
agent connection's writer hands its frames to :class:`_RoutingSink`, which puts each on a
stream from the routing facts the connection attached to it (answer to which request, or
which session a request or notification names; see :mod:`iac_code.rpc.frames`), without
parsing the encoded bytes, following the transport's routing rules:

- a response goes where its request came from: the session stream of the request's
  ``Acp-Session-Id``, else the connection stream (``session/load`` answers on the connection
  stream, like ``session/new``, whose session did not exist when it was sent);
- an agent request or notification whose ``params.sessionId`` names a session goes to that
  session's stream, anything else to the connection stream;
- over WebSocket everything goes to the one stream the socket reads.

The client's answers to agent requests are checked against the stream the request went out
on (``Acp-Session-Id`` must match).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
from anyio.abc import TaskGroup, TaskStatus

from iac_code.remote.options import RemoteLimits
from iac_code.remote.principals import CURRENT_PRINCIPAL
from iac_code.remote.protocol import message_key
from iac_code.remote.streams import OutboundStream, OutputBudget, ReplayBudget
from iac_code.rpc.channels import FrameSink, MessageQueue
from iac_code.rpc.connection import Connection, RequestHandler
from iac_code.rpc.frames import ANSWER, NOTIFICATION, REQUEST, Frame
from iac_code.rpc.framing import decode_line, encode_message

__all__ = ["ConnectionGone", "HandlerFactory", "RemoteConnection", "Route", "Transport"]

log = logging.getLogger("iac_code.remote")

Transport = Literal["http", "websocket"]
Route = str | None
"""Where a message goes: a session id, or None for the connection stream."""

HandlerFactory = Callable[
    [Connection, TaskGroup], tuple[RequestHandler, Callable[[], Awaitable[None]]]
]
"""Builds the handler for a new agent connection and its on-close hook (agent shutdown)."""

_INBOUND_MESSAGES = 64  # client messages queued for the agent; a full queue makes send() wait


class ConnectionGone(Exception):
    """The connection closed while a request was using it."""


class _InitializeWaiter:
    def __init__(self, key: tuple[str, object]) -> None:
        self.key = key
        self.done = anyio.Event()
        self.response: dict[str, Any] | None = None


class RemoteConnection:
    def __init__(
        self,
        transport: Transport,
        make_handler: HandlerFactory,
        limits: RemoteLimits,
        *,
        connection_id: str | None = None,
        principal: str | None = None,
    ) -> None:
        self.id = connection_id or secrets.token_urlsafe(18)
        #: Who opened the connection (``--auth``); only they may use it.
        self.principal = principal
        self.transport = transport
        self.limits = limits
        self._make_handler = make_handler
        self.budget = OutputBudget(limits.max_buffered_bytes)
        self.replay = ReplayBudget(limits.replay_bytes_per_connection)
        self.connection_stream = OutboundStream(self.budget, limits.replay_bytes, self.replay)
        self.session_streams: dict[str, OutboundStream] = {}
        self._to_agent = MessageQueue(_INBOUND_MESSAGES)
        self.agent = Connection(
            self._to_agent,
            _RoutingSink(self),
            on_close=self._on_agent_close,
            logger=logging.getLogger("iac_code.rpc"),
        )
        self._on_close_hook: Callable[[], Awaitable[None]] | None = None
        #: Client request id → route of its answer.
        self._answer_routes: dict[tuple[str, object], Route] = {}
        #: Agent request id → the stream it was sent on (the client must answer from there).
        self._agent_request_routes: dict[tuple[str, object], Route] = {}
        self._initialize: _InitializeWaiter | None = None
        #: Client requests handed to the agent and not answered yet (a drain waits for them).
        self._unanswered: set[tuple[str, object]] = set()
        self.closed = anyio.Event()
        self.closing = False
        self.last_activity = anyio.current_time()

    # ------------------------------------------------------------------ lifecycle

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve until closed. Started with ``TaskGroup.start``: ready once the handler exists."""
        try:
            async with anyio.create_task_group() as background:
                # The factory reads the principal from the context (its signature predates it).
                token = CURRENT_PRINCIPAL.set(self.principal)
                try:
                    handler, on_close = self._make_handler(self.agent, background)
                finally:
                    CURRENT_PRINCIPAL.reset(token)
                self.agent.handler = handler
                self._on_close_hook = on_close
                task_status.started()
                await self.agent.serve()
                # The agent has shut its sessions down; stop anything they left running.
                background.cancel_scope.cancel()
        finally:
            self.closing = True
            for stream in self._all_streams():
                stream.finish()
            self.budget.release_all()
            if self._initialize is not None:
                self._initialize.done.set()
            self.closed.set()

    def close(self) -> None:
        """Begin a graceful close: the agent stops reading, sessions end, streams finish."""
        self.closing = True
        self.agent.close()

    def abort(self) -> None:
        """Close and drop output no reader has taken (DELETE, limits)."""
        self.close()
        for stream in self._all_streams():
            stream.discard_pending()

    async def _on_agent_close(self) -> None:
        if self._on_close_hook is not None:
            await self._on_close_hook()

    def touch(self) -> None:
        self.last_activity = anyio.current_time()

    @property
    def busy(self) -> bool:
        """A client request (a prompt, say) is still being handled."""
        return bool(self._unanswered)

    @property
    def has_reader(self) -> bool:
        return any(stream.has_reader for stream in self._all_streams())

    def _all_streams(self) -> list[OutboundStream]:
        return [self.connection_stream, *self.session_streams.values()]

    # ------------------------------------------------------------------ inbound

    async def initialize(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``initialize`` and return the agent's answer (a response object)."""
        key = message_key(message.get("id"))
        assert key is not None, "callers check the id first"
        waiter = _InitializeWaiter(key)
        self._initialize = waiter
        await self.send(message)
        await waiter.done.wait()
        self._initialize = None
        if waiter.response is None:
            raise ConnectionGone()
        return waiter.response

    def remember_answer_route(self, message: dict[str, Any], route: Route) -> None:
        """A client request is about to go in: its answer goes to ``route``."""
        key = message_key(message.get("id"))
        if key is None or "method" not in message:
            return
        if message.get("method") == "session/load":
            route = None  # answered on the connection stream, as the SDK clients expect
        self._answer_routes[key] = route

    def agent_request_route(self, response: dict[str, Any]) -> tuple[bool, Route]:
        """For a client's answer: (known, route) of the agent request it answers."""
        key = message_key(response.get("id"))
        if key is None or key not in self._agent_request_routes:
            return False, None
        return True, self._agent_request_routes[key]

    def forget_agent_request(self, response: dict[str, Any]) -> None:
        key = message_key(response.get("id"))
        if key is not None:
            self._agent_request_routes.pop(key, None)

    async def send(self, message: object) -> None:
        """Hand one decoded message to the agent."""
        if self.closing:
            raise ConnectionGone()
        self.touch()
        if isinstance(message, dict) and "method" in message:
            key = message_key(message.get("id"))
            if key is not None:
                self._unanswered.add(key)
        try:
            await self._to_agent.put(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ConnectionGone() from None

    def push_local(self, message: dict[str, Any]) -> None:
        """A transport-level answer (e.g. to a WebSocket batch) on the connection stream."""
        self.connection_stream.push(encode_message(message).rstrip(b"\n"))

    # ------------------------------------------------------------------ outbound

    def session_stream(self, session_id: str) -> OutboundStream:
        """The stream of ``session_id`` (over WebSocket: the one stream)."""
        if self.transport == "websocket":
            return self.connection_stream
        stream = self.session_streams.get(session_id)
        if stream is None:
            stream = OutboundStream(self.budget, self.limits.replay_bytes, self.replay)
            if self.closing:
                stream.finish()
            self.session_streams[session_id] = stream
        return stream

    def release_session_stream(self, session_id: str) -> None:
        """A reader left: forget a stream that never carried anything."""
        stream = self.session_streams.get(session_id)
        if stream is not None and not stream.has_reader and not stream.carried_events:
            del self.session_streams[session_id]
            self.replay.forget(stream)

    async def route(self, frame: Frame) -> None:
        """Put one frame of the agent's on the stream it belongs to, from the routing facts
        the connection gave it (the bytes are not parsed)."""
        kind = frame.kind
        if kind == NOTIFICATION:
            stream = self._stream_of(self._bounded(frame.session_id))
        elif kind == REQUEST:
            route = self._bounded(frame.session_id)
            key = message_key(frame.request_id)
            if key is not None:
                self._agent_request_routes[key] = route  # the client answers from there
            stream = self._stream_of(route)
        elif kind == ANSWER:
            key = message_key(frame.request_id)
            self._unanswered.discard(key)
            if self._claim_initialize(key, frame.data):
                return
            # session/load answers on the connection stream (see remember_answer_route).
            stream = self._stream_of(self._answer_routes.pop(key, None) if key else None)
        else:
            # Batches are split by the transport (ws_batches): the agent never answers one.
            log.error("agent wrote a %s frame on a remote connection; dropped", kind)
            return
        stream.push(frame.data[:-1])  # the encoder ends every frame in "\n"
        if self.budget.full:
            await self._wait_for_room()

    def _claim_initialize(self, key: tuple[str, object] | None, data: bytes) -> bool:
        waiter = self._initialize
        if waiter is None or key is None or key != waiter.key:
            return False
        response = decode_line(data[:-1])  # once per connection: its one initialize answer
        waiter.response = response if isinstance(response, dict) else None
        waiter.done.set()
        return True

    def _bounded(self, session_id: str | None) -> Route:
        """A session id to route by; an over-long one goes to the connection stream."""
        if session_id is not None and len(session_id) > self.limits.max_id_length:
            return None
        return session_id

    def _stream_of(self, route: Route) -> OutboundStream:
        return self.connection_stream if route is None else self.session_stream(route)

    async def _wait_for_room(self) -> None:
        """Backpressure: wait until readers take output, or close a stalled connection."""
        with anyio.move_on_after(self.limits.output_stall_seconds) as scope:
            while self.budget.full and not self.closing:
                await self.budget.wait_for_progress()
        if scope.cancelled_caught:
            log.warning(
                "closing connection %s: nobody read its output for %.0f s",
                self.id,
                self.limits.output_stall_seconds,
            )
            self.abort()


class _RoutingSink(FrameSink):
    """The agent connection's output: every frame is routed as the writer hands it over.

    Waiting here (a full output budget) holds the agent's writer, which stops the agent
    reading more client messages: the same backpressure as a full stdout pipe.
    """

    __slots__ = ("_connection",)

    def __init__(self, connection: RemoteConnection) -> None:
        self._connection = connection

    async def send_frames(self, frames: list[Frame]) -> None:
        for frame in frames:
            await self._connection.route(frame)

    async def aclose(self) -> None:
        pass  # the streams are finished when the connection's run() ends
