"""Streamable HTTP and WebSocket as the checker meets them, apart from any connection: where
a remote agent listens (:class:`RemoteTarget`), the ACP headers, the one Server-Sent-Events
parser of the checker and the one way it reads a stream (:func:`open_event_stream`), and how a
refused POST reads in JSON-RPC form."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

CONNECTION_HEADER = "Acp-Connection-Id"
SESSION_HEADER = "Acp-Session-Id"
EVENT_STREAM = "text/event-stream"


@dataclass(frozen=True)
class RemoteTarget:
    """Where a remote agent listens and how to reach it."""

    url: str
    websocket: bool = False
    token: str | None = None

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    @property
    def ws_url(self) -> str:
        if self.url.startswith("https://"):
            return "wss://" + self.url[len("https://") :]
        return "ws://" + self.url.removeprefix("http://")


class AccessDenied(Exception):
    """The server refused the checker's credentials (401): a setup problem of the run (a
    missing or wrong ``--token``), not a protocol failure of the agent."""


@dataclass
class Rejection:
    """One POST the server did not accept (any status other than 200/202)."""

    frame_seq: int
    status: int
    body: str


@dataclass
class SseEvent:
    data: str
    event_id: str | None = None
    event: str | None = None


@dataclass
class SseParser:
    """Incremental Server-Sent-Events parser (WHATWG rules for data/id/event and comments)."""

    _data: list[str] = field(default_factory=list)
    _id: str | None = None
    _event: str | None = None
    last_event_id: str | None = None

    def feed_line(self, line: str) -> SseEvent | None:
        if line == "":
            if not self._data:
                self._event = None
                return None
            event = SseEvent("\n".join(self._data), self._id, self._event)
            self._data, self._event = [], None
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
            self.last_event_id = value
        elif name == "event":
            self._event = value
        return None


class EventStream:
    """One SSE stream the server answered a GET with: its status, then its events."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status = response.status_code

    async def refusal(self) -> str:
        """The body of a GET the server refused (any status other than 200), as text."""
        return (await self._response.aread()).decode("utf-8", "replace")

    async def events(self) -> AsyncIterator[SseEvent]:
        """Each event as it arrives, until the server ends the stream."""
        parser = SseParser()
        async for line in self._response.aiter_lines():
            if (event := parser.feed_line(line)) is not None:
                yield event


@asynccontextmanager
async def open_event_stream(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], answer_within: float
) -> AsyncIterator[EventStream]:
    """GET ``url`` as an SSE stream: ``answer_within`` (seconds) bounds the server's answer,
    not the quiet between events (a stream may rightly stay quiet while the agent has
    nothing to say)."""
    import httpx  # only remote runs need it

    async with client.stream(
        "GET", url, headers=headers, timeout=httpx.Timeout(answer_within, read=None)
    ) as response:
        yield EventStream(response)


def refusal_answer(request: dict[str, Any], rejection: Rejection) -> bytes:
    """The JSON-RPC form of the server's HTTP refusal of a request (see module doc)."""
    detail = " ".join(rejection.body.split())[:200]
    message = {
        "jsonrpc": "2.0",
        "id": request["id"],
        "error": {"code": -32600, "message": f"HTTP {rejection.status} (transport): {detail}"},
    }
    return json.dumps(message).encode("utf-8")


def header_safe(value: str) -> bool:
    """Whether ``value`` can travel as an HTTP header value (visible ASCII and spaces)."""
    return bool(value) and value.isascii() and value.isprintable() and value.strip() == value


def session_of(message: Any) -> str | None:
    """The session a message concerns: ``params.sessionId`` when it can be a header value.

    A session id that cannot (fuzzed params draw any string) is sent without the header, and
    the server judges that as it sees fit."""
    if isinstance(message, dict) and isinstance(message.get("params"), dict):
        sid = message["params"].get("sessionId")
        if isinstance(sid, str) and header_safe(sid):
            return sid
    return None
