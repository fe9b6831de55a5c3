"""``/acp`` over plain HTTP: POST carries client messages, GET opens an SSE stream, DELETE ends.

Status codes follow the official TypeScript SDK's server where it defines one, and the
issue's hardening beyond it:

===========================================  ======
POST ``initialize`` without a connection id   200 + ``Acp-Connection-Id`` (400 if it failed)
POST anything else                            202, the answer arrives on a stream
body not JSON (NaN included) / not an object
/ an array / an id with a lone surrogate       400 (-32700 / -32600 body)
Content-Type not application/json             415
missing / unknown ``Acp-Connection-Id``       400 / 404 (also when the connection lives
                                              on another replica: the body says to
                                              initialize again, then load the session)
session method without / with another
``Acp-Session-Id``                            400
body over the size limit                      413
body not received within the body deadline    408 (and the connection is closed)
GET without ``Accept: text/event-stream``     406
GET on a stream that already has a reader     409
GET ``Last-Event-ID`` older than the replay   410
too many connections, server shutting down,
bodies being received over their total cap
(large bodies: over the cap minus the reserve
kept for small ones)                          503 + Retry-After
other HTTP methods                            405
===========================================  ======
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from iac_code.remote.guard import request_principal
from iac_code.remote.protocol import (
    ACCEPT_EVENT_STREAM,
    CONNECTION_HEADER,
    LAST_EVENT_ID_HEADER,
    SESSION_HEADER,
    has_lone_surrogate_id,
    is_json_content_type,
    loads_message,
    message_key,
    needs_session_header,
    params_session_id,
)
from iac_code.remote.registry import ConnectionRegistry, TooManyConnections
from iac_code.remote.remote_connection import ConnectionGone, RemoteConnection, Route
from iac_code.remote.responses import (
    PARSE_ERROR,
    request_id_of,
    transport_error,
    unknown_connection,
    with_request_id,
)
from iac_code.remote.sse import SseResponse
from iac_code.remote.streams import ReaderBusy, ResumeGone

__all__ = ["AcpHttpEndpoint"]

_ALLOWED = "GET, POST, DELETE"
_MAX_EVENT_ID_DIGITS = 20


class _Refused(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


class AcpHttpEndpoint:
    """The ASGI app behind ``/acp`` for HTTP requests."""

    def __init__(self, registry: ConnectionRegistry) -> None:
        self.registry = registry
        self.limits = registry.limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        handlers = {"POST": self._post, "GET": self._get, "DELETE": self._delete}
        handler = handlers.get(request.method)
        if handler is None:
            response: ASGIApp = transport_error(
                405, "Method Not Allowed", headers={"allow": _ALLOWED}
            )
        else:
            try:
                response = await handler(request)
            except _Refused as refused:
                response = refused.response
            except ClientDisconnect:
                return
        await response(scope, receive, send)

    # ------------------------------------------------------------------ POST

    async def _post(self, request: Request) -> Response:
        if not is_json_content_type(request.headers.get("content-type")):
            return transport_error(415, "Content-Type must be application/json")
        message = await self._read_message(request)
        request_id = request_id_of(message)
        try:
            response = await self._route_post(request, message)
        except _Refused as refused:
            response = refused.response
        if request_id is not None and response.status_code >= 400:
            response = with_request_id(response, request_id)
        return response

    async def _route_post(self, request: Request, message: dict[str, Any]) -> Response:
        connection_id = self._header_id(request, CONNECTION_HEADER)
        if message.get("method") == "initialize" and "id" in message:
            if connection_id is not None:
                return transport_error(400, "initialize is not allowed on an existing connection")
            return await self._initialize(message, request_principal(request.scope))
        if connection_id is None:
            return transport_error(400, "Missing Acp-Connection-Id")
        connection = self._known(request, connection_id)
        if "method" in message:
            route = self._request_route(request, message)
            connection.remember_answer_route(message, route)
        else:
            self._check_answer_route(request, connection, message)
        try:
            await connection.send(message)
        except ConnectionGone:
            return unknown_connection()
        if "method" not in message:
            connection.forget_agent_request(message)
        return Response(status_code=202)

    def _buffer_full(self) -> _Refused:
        cap = self.limits.max_buffered_body_bytes
        return _Refused(
            transport_error(
                503,
                f"Too many request bodies being received at once (over {cap} bytes); retry shortly",
                headers={"retry-after": "1"},
            )
        )

    def _body_buffer_cap(self, body_size: int) -> int:
        """How full the shared body buffer may be for a body of ``body_size`` bytes so far:
        large bodies leave the reserve to small ones, so slow uploads cannot lock out
        ``initialize`` and the answers clients owe the agent."""
        cap = self.limits.max_buffered_body_bytes
        if body_size <= self.limits.small_body_bytes:
            return cap
        return cap - min(self.limits.small_body_reserve_bytes, cap // 8)

    async def _read_message(self, request: Request) -> dict[str, Any]:
        limit = self.limits.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _Refused(transport_error(413, f"Body larger than {limit} bytes"))
        # Bytes are counted as they arrive (a declared length is only a promise), and
        # given back once the message is parsed or refused.
        held = 0
        try:
            body = bytearray()
            with anyio.fail_after(self.limits.body_timeout_seconds):
                async for chunk in request.stream():
                    if len(body) + len(chunk) > limit:
                        raise _Refused(transport_error(413, f"Body larger than {limit} bytes"))
                    cap = self._body_buffer_cap(len(body) + len(chunk))
                    if self.registry.receiving_body_bytes + len(chunk) > cap:
                        raise self._buffer_full()
                    self.registry.receiving_body_bytes += len(chunk)
                    held += len(chunk)
                    body += chunk
            return self._parse_message(body)
        except TimeoutError:
            seconds = f"{self.limits.body_timeout_seconds:g}"
            raise _Refused(
                transport_error(
                    408,
                    f"The request body did not arrive within {seconds} s",
                    headers={"connection": "close"},
                )
            ) from None
        finally:
            self.registry.receiving_body_bytes -= held

    @staticmethod
    def _parse_message(body: bytearray) -> dict[str, Any]:
        try:
            value = loads_message(bytes(body).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise _Refused(
                transport_error(400, "Body is not valid JSON", code=PARSE_ERROR)
            ) from None
        if isinstance(value, list):
            raise _Refused(transport_error(400, "JSON-RPC batches are not supported"))
        if not isinstance(value, dict):
            raise _Refused(transport_error(400, "Body must be a JSON-RPC message object"))
        if has_lone_surrogate_id(value):
            raise _Refused(transport_error(400, "The id holds a lone UTF-16 surrogate"))
        return value

    async def _initialize(self, message: dict[str, Any], principal: str | None) -> Response:
        if message_key(message.get("id")) is None:
            return transport_error(400, "initialize needs a string or integer id")
        try:
            connection = await self.registry.create("http", principal)
        except TooManyConnections as exc:
            return transport_error(
                503, f"Connection limit reached ({exc})", headers={"retry-after": "5"}
            )
        kept = False
        try:
            with anyio.move_on_after(self.limits.initialize_timeout_seconds) as scope:
                answer = await connection.initialize(message)
            if scope.cancelled_caught:
                return transport_error(504, "initialize timed out")
            # ASCII-escaped like every other frame: whatever the answer holds can be encoded.
            body = json.dumps(answer, separators=(",", ":"), allow_nan=False).encode("ascii")
            if "result" not in answer:
                # A connection that never initialized is useless; the body says why it failed.
                return Response(body, status_code=400, media_type="application/json")
            kept = True
            return Response(
                body, media_type="application/json", headers={"Acp-Connection-Id": connection.id}
            )
        except ConnectionGone:
            return transport_error(503, "The connection closed during initialize")
        finally:
            # Any way out but success frees the slot at once (not at the idle timeout).
            if not kept:
                connection.abort()

    def _request_route(self, request: Request, message: dict[str, Any]) -> Route:
        header = self._header_id(request, SESSION_HEADER)
        in_params = params_session_id(message)
        if needs_session_header(message) and header is None:
            raise _Refused(transport_error(400, "Missing Acp-Session-Id"))
        if header is not None and in_params is not None and header != in_params:
            raise _Refused(transport_error(400, "Acp-Session-Id does not match params.sessionId"))
        return header

    def _check_answer_route(
        self, request: Request, connection: RemoteConnection, message: dict[str, Any]
    ) -> None:
        known, route = connection.agent_request_route(message)
        if not known or route is None:
            return
        header = self._header_id(request, SESSION_HEADER)
        if header is None:
            raise _Refused(transport_error(400, "Missing Acp-Session-Id"))
        if header != route:
            raise _Refused(
                transport_error(400, "Acp-Session-Id does not match the request's session")
            )

    # ------------------------------------------------------------------ GET

    async def _get(self, request: Request) -> Response | SseResponse:
        accept = request.headers.get("accept", "").lower()
        if ACCEPT_EVENT_STREAM not in accept:
            return transport_error(406, "GET needs Accept: text/event-stream")
        connection_id = self._header_id(request, CONNECTION_HEADER)
        if connection_id is None:
            return transport_error(400, "Missing Acp-Connection-Id")
        connection = self._known(request, connection_id)
        session_id = self._header_id(request, SESSION_HEADER)
        stream = (
            connection.connection_stream
            if session_id is None
            else connection.session_stream(session_id)
        )
        try:
            reader = stream.attach(self._last_event_id(request))
        except ReaderBusy:
            return transport_error(409, "This stream already has a reader")
        except ResumeGone:
            return transport_error(410, "Last-Event-ID is older than the replay buffer")
        connection.touch()

        def on_detach() -> None:
            connection.touch()
            if session_id is not None:
                connection.release_session_stream(session_id)

        return SseResponse(
            stream, reader, keepalive_seconds=self.limits.keepalive_seconds, on_detach=on_detach
        )

    @staticmethod
    def _last_event_id(request: Request) -> int | None:
        value = request.headers.get(LAST_EVENT_ID_HEADER)
        if value is None or not value.strip():
            return None
        digits = value.strip()
        # ASCII digits only (str.isdigit also takes "²" and other scripts' digits, which
        # int() then refuses), and no more than a 64-bit counter has.
        if not (digits.isascii() and digits.isdigit() and len(digits) <= _MAX_EVENT_ID_DIGITS):
            raise _Refused(
                transport_error(400, "Last-Event-ID must be an event id from this stream")
            )
        return int(digits)

    # ------------------------------------------------------------------ DELETE

    async def _delete(self, request: Request) -> Response:
        connection_id = self._header_id(request, CONNECTION_HEADER)
        if connection_id is None:
            return transport_error(400, "Missing Acp-Connection-Id")
        if not self.registry.remove(connection_id, request_principal(request.scope)):
            return unknown_connection()
        return Response(status_code=202)

    # ------------------------------------------------------------------ helpers

    def _header_id(self, request: Request, name: str) -> str | None:
        value = request.headers.get(name)
        if value is None or value == "":
            return None
        if len(value) > self.limits.max_id_length:
            raise _Refused(
                transport_error(400, f"{name} is longer than {self.limits.max_id_length}")
            )
        return value

    def _known(self, request: Request, connection_id: str) -> RemoteConnection:
        connection = self.registry.get(connection_id, request_principal(request.scope))
        if connection is None:
            raise _Refused(unknown_connection())
        return connection
