"""Raw HTTP exchanges with a remote ACP endpoint, for the transport checks.

Unlike :class:`~.remote.RemoteConnection`, which hides the transport so that protocol checks
run unchanged, a probe shows it: every status code, header and SSE event is visible, and a
check can send what a well-behaved client never would (no connection id, a wrong content type,
a second reader on one stream). Every exchange is kept in :attr:`HttpProbe.log` so a failing
check can show exactly what it sent and got.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup

from .remote_http import (
    CONNECTION_HEADER,
    EVENT_STREAM,
    SESSION_HEADER,
    RemoteTarget,
    open_event_stream,
)

JSON_TYPE = "application/json"


def _json_or_none(text: str) -> Any:
    """``text`` parsed as JSON, or None when it is not JSON (a probe shows what came)."""
    try:
        return json.loads(text)
    except ValueError:
        return None


@dataclass
class Exchange:
    """One request and the status (and start of the body) it got."""

    method: str
    headers: dict[str, str]
    body: str
    status: int
    response_headers: dict[str, str]
    response_body: str

    def describe(self) -> str:
        sent = self.body[:120]
        got = self.response_body[:160]
        return f"{self.method} {sent!r} → {self.status} {got!r}"

    def json_body(self) -> Any:
        return _json_or_none(self.response_body)


@dataclass
class StreamEvent:
    data: str
    event_id: str | None

    @property
    def message(self) -> Any:
        return _json_or_none(self.data)


@dataclass
class SseReader:
    """An open SSE stream whose events are collected in the background."""

    status: int = 0
    events: list[StreamEvent] = field(default_factory=list)
    ended: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    _changed: anyio.Event = field(default_factory=anyio.Event)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(
        self,
        predicate: Callable[[StreamEvent], bool],
        timeout: float,  # noqa: ASYNC109
        since: int = 0,
    ) -> StreamEvent | None:
        """The first event from index ``since`` on that matches, or None after ``timeout``."""
        with anyio.move_on_after(timeout):
            cursor = since
            while True:
                while cursor < len(self.events):
                    event = self.events[cursor]
                    cursor += 1
                    if predicate(event):
                        return event
                if self.ended.is_set():
                    return None
                await self._changed.wait()
        return None

    def close(self) -> None:
        """Drop the stream (as a client whose network went away would)."""
        self.scope.cancel()


def answers(request_id: Any) -> Callable[[StreamEvent], bool]:
    """Predicate: the event is the response to ``request_id``."""

    def match(event: StreamEvent) -> bool:
        msg = event.message
        return isinstance(msg, dict) and "method" not in msg and msg.get("id") == request_id

    return match


class HttpProbe:
    """A raw client for one remote endpoint; owns an httpx client and its readers' tasks."""

    def __init__(self, target: RemoteTarget, tg: TaskGroup, *, timeout: float) -> None:
        self.target = target
        self.timeout = timeout
        self.tg = tg
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(timeout))
        self.log: list[Exchange] = []

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.client.aclose()

    def evidence(self, last: int = 12) -> list[str]:
        return [exchange.describe() for exchange in self.log[-last:]]

    def headers(
        self,
        connection: str | None = None,
        session: str | None = None,
        *,
        auth: bool = True,
        **extra: str,
    ) -> dict[str, str]:
        headers = self.target.headers() if auth else {}
        if connection is not None:
            headers[CONNECTION_HEADER] = connection
        if session is not None:
            headers[SESSION_HEADER] = session
        headers.update({key.replace("_", "-"): value for key, value in extra.items()})
        return headers

    async def request(self, method: str, headers: dict[str, str], body: bytes = b"") -> Exchange:
        response = await self.client.request(method, self.target.url, headers=headers, content=body)
        exchange = Exchange(
            method,
            headers,
            body.decode("utf-8", "replace"),
            response.status_code,
            {k.lower(): v for k, v in response.headers.items()},
            response.text,
        )
        self.log.append(exchange)
        return exchange

    async def post(
        self,
        message: Any,
        connection: str | None = None,
        session: str | None = None,
        *,
        content_type: str = JSON_TYPE,
        raw: bytes | None = None,
        auth: bool = True,
        **extra: str,
    ) -> Exchange:
        body = raw if raw is not None else json.dumps(message).encode()
        headers = self.headers(connection, session, auth=auth, **extra)
        headers["Content-Type"] = content_type
        headers.setdefault("Accept", f"{JSON_TYPE}, {EVENT_STREAM}")
        return await self.request("POST", headers, body)

    async def initialize(self, *, auth: bool = True, **extra: str) -> tuple[Exchange, str | None]:
        """POST initialize without a connection id; returns the exchange and the new id."""
        headers = self.headers(auth=auth, **extra)
        headers["Content-Type"] = JSON_TYPE
        headers["Accept"] = f"{JSON_TYPE}, {EVENT_STREAM}"
        exchange = await self.request("POST", headers, json.dumps(initialize_request()).encode())
        return exchange, exchange.response_headers.get(CONNECTION_HEADER.lower())

    async def delete(self, connection: str) -> Exchange:
        return await self.request("DELETE", self.headers(connection))

    async def open_stream(
        self,
        connection: str,
        session: str | None = None,
        *,
        last_event_id: str | None = None,
        accept: str = EVENT_STREAM,
    ) -> SseReader:
        """GET a stream and collect its events in the background; returns once the server
        answered the GET (reader.status) or the bound passed (status 0)."""
        reader = SseReader()
        headers = self.headers(connection, session)
        headers["Accept"] = accept
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        answered = anyio.Event()
        self.tg.start_soon(self._read, reader, headers, answered)
        with anyio.move_on_after(self.timeout):
            await answered.wait()
        return reader

    async def _read(
        self, reader: SseReader, headers: dict[str, str], answered: anyio.Event
    ) -> None:
        try:
            with reader.scope:
                async with open_event_stream(
                    self.client, self.target.url, headers, self.timeout
                ) as stream:
                    reader.status = stream.status
                    answered.set()
                    if stream.status != 200:
                        refusal = await stream.refusal()
                        self.log.append(Exchange("GET", headers, "", stream.status, {}, refusal))
                        return
                    self.log.append(Exchange("GET", headers, "", 200, {}, "(event stream)"))
                    async for event in stream.events():
                        reader.events.append(StreamEvent(event.data, event.event_id))
                        reader._notify()
        except httpx.HTTPError:
            pass
        finally:
            answered.set()
            reader.ended.set()
            reader._notify()


def initialize_request(request_id: Any = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": 1,
            "clientCapabilities": {},
            "clientInfo": {"name": "acp-conformance", "version": "transport-probe"},
        },
    }


def rpc(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
