"""The message-level JSON-RPC client the tests and the demo drive agents with.

:class:`WireClient` is independent of the transport: a transport gives it a ``send(message,
stream)`` coroutine and hands it every decoded message it reads (:meth:`WireClient.deliver`),
with the stream it came on (``None`` on stdio and WebSocket; the connection stream or a
session id on Streamable HTTP). The client keeps the transcript (everything sent and received,
in order), answers the agent's requests with per-method handlers (each in its own task; a
handler returning :data:`NO_ANSWER` leaves the request unanswered, :class:`ErrorAnswer` answers
with an error), and every wait is bounded (``anyio.fail_after``).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import anyio
import anyio.abc

__all__ = [
    "CANCELLED_ANSWER",
    "NO_ANSWER",
    "TIMEOUT",
    "ErrorAnswer",
    "Frame",
    "Handler",
    "Reply",
    "SendMessage",
    "WireClient",
    "WireError",
    "allow",
    "allow_once",
    "selected",
]

Frame = dict[str, Any]
Handler = Callable[["WireClient", Frame], Awaitable[Any]]
Direction = Literal["sent", "received"]

TIMEOUT = 120.0
"""Default bound of every wait; generous because test machines are busy."""

NO_ANSWER: Any = object()
"""Returned by a request handler: leave the agent's request unanswered."""


class WireError(AssertionError):
    """The agent (or its transport) did not do what the client needed: a test failure."""


@dataclass(frozen=True)
class ErrorAnswer:
    """Returned by a request handler: answer with this JSON-RPC error."""

    code: int
    message: str


class SendMessage(Protocol):
    async def __call__(self, message: Any, stream: str | None) -> None: ...


@dataclass
class Reply:
    """A response frame plus the ``session/update`` params that arrived since its request."""

    frame: Frame
    updates: list[dict[str, Any]]
    index: int  # position of the response in WireClient.frames

    @property
    def result(self) -> Any:
        assert "result" in self.frame, f"expected a result, got {self.frame}"
        return self.frame["result"]

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.frame, f"expected an error, got {self.frame}"
        error: dict[str, Any] = self.frame["error"]
        return error

    def kinds(self) -> list[str]:
        return [u["update"]["sessionUpdate"] for u in self.updates]


def is_response(frame: Any, request_id: Any) -> bool:
    return isinstance(frame, dict) and "method" not in frame and frame.get("id") == request_id


def is_update(frame: Any) -> bool:
    return isinstance(frame, dict) and frame.get("method") == "session/update"


class WireClient:
    """The client end of one ACP connection, at the level of JSON-RPC messages."""

    def __init__(
        self,
        send: SendMessage,
        *,
        handlers: Mapping[str, Handler] | None = None,
        refuse_unhandled: bool = True,
        wait_s: float = TIMEOUT,
        first_id: int = 1,
        capabilities: Mapping[str, Any] | None = None,
        transport: Any = None,
    ) -> None:
        self._send = send
        #: What the transport offers beyond messages (streams, raw bytes, the socket).
        self.transport = transport
        #: The client capabilities ``initialize`` advertises unless it is given others.
        self.capabilities: dict[str, Any] = dict(capabilities or {})
        #: Handlers of agent→client requests by method. A request without one is answered
        #: "method not found" when ``refuse_unhandled``, else left for the test to answer.
        self.handlers: dict[str, Handler] = dict(handlers or {})
        self.refuse_unhandled = refuse_unhandled
        self.wait_s = wait_s
        self.frames: list[Any] = []  # everything the agent wrote, in order
        self.frame_streams: list[str | None] = []  # the stream each frame came on
        self.sent: list[Any] = []  # everything this client wrote
        self.transcript: list[tuple[Direction, Any]] = []  # both directions, in order
        self.agent_requests: list[Frame] = []
        self.agent_request_streams: list[str | None] = []
        #: Called with ("sent" | "received", message) as messages pass (the demo prints them).
        self.observers: list[Callable[[Direction, Any], None]] = []
        self.closed = False
        self._ids = itertools.count(first_id)
        self._sent_at: dict[Any, int] = {}
        self._claimed: set[int] = set()  # answers already handed out by reply()
        self._cursor = 0  # frames before it were seen by a wait (see next_frame)
        self._changed = anyio.Event()
        self._task_group: anyio.abc.TaskGroup | None = None

    # ------------------------------------------------------------------ transport side

    def attach(self, task_group: anyio.abc.TaskGroup) -> None:
        """The task group the agent's requests are handled in."""
        self._task_group = task_group

    def deliver(self, message: Any, stream: str | None = None) -> None:
        """A message the transport read (a decoded frame, or a marker of an unparsable one)."""
        self.frames.append(message)
        self.frame_streams.append(stream)
        self._record("received", message)
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.agent_requests.append(message)
            self.agent_request_streams.append(stream)
            if message["method"] in self.handlers or self.refuse_unhandled:
                assert self._task_group is not None, "attach() the client to a task group first"
                self._task_group.start_soon(self._handle, message, stream)
        self.changed()

    def end(self) -> None:
        """The transport's input ended: waits fail instead of timing out."""
        self.closed = True
        self.changed()

    def changed(self) -> None:
        """Wake every wait (a message went either way, a stream opened or closed)."""
        self._changed.set()
        self._changed = anyio.Event()

    def _record(self, direction: Direction, message: Any) -> None:
        self.transcript.append((direction, message))
        for observer in self.observers:
            observer(direction, message)

    async def _handle(self, frame: Frame, stream: str | None) -> None:
        handler = self.handlers.get(frame["method"])
        result = (
            await handler(self, frame)
            if handler is not None
            else ErrorAnswer(-32601, "Method not found")
        )
        if isinstance(result, ErrorAnswer):
            error = {"code": result.code, "message": result.message}
            await self.send({"jsonrpc": "2.0", "id": frame["id"], "error": error}, stream)
        elif result is not NO_ANSWER:
            await self.answer(frame["id"], result, stream)

    # ------------------------------------------------------------------ sending

    def new_id(self) -> int:
        return next(self._ids)

    async def send(self, message: Any, stream: str | None = None) -> None:
        """Send one message as it is (on ``stream``: the session a Streamable HTTP POST
        names; ignored by stdio and WebSocket)."""
        self._note_sent(message)
        await self._send(message, stream)

    async def send_together(self, *messages: Any) -> None:
        """Send several messages in one write, so the agent reads them in one go (a
        transport with ``send_together``: the NDJSON pipe)."""
        for message in messages:
            self._note_sent(message)
        await self.transport.send_together(messages)

    def _note_sent(self, message: Any) -> None:
        if isinstance(message, dict) and "id" in message and "method" in message:
            self._sent_at[message["id"]] = len(self.frames)
        self.sent.append(message)
        self._record("sent", message)
        self.changed()

    async def answer(self, request_id: Any, result: Any, stream: str | None = None) -> None:
        await self.send({"jsonrpc": "2.0", "id": request_id, "result": result}, stream)

    async def start_request(
        self,
        method: str,
        params: Any = None,
        *,
        request_id: Any = None,
        stream: str | None = None,
    ) -> Any:
        """Send a request and return its id, without waiting for the answer."""
        request_id = self.new_id() if request_id is None else request_id
        message: Frame = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message, stream)
        return request_id

    async def notify(self, method: str, params: Any = None, stream: str | None = None) -> None:
        message: Frame = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message, stream)

    # ------------------------------------------------------------------ waiting

    async def wait_for(
        self, condition: Callable[[], Any], wait_s: float | None = None, what: str = "a condition"
    ) -> Any:
        """Wait until ``condition()`` is truthy (re-checked on every message either way);
        return its value."""
        with anyio.fail_after(self.wait_s if wait_s is None else wait_s):
            while True:
                value = condition()
                if value:
                    return value
                if self.closed:
                    raise WireError(f"the agent's output ended while waiting for {what}")
                await self._changed.wait()

    async def wait_frame(
        self, predicate: Callable[[Any], bool], *, start: int = 0, wait_s: float | None = None
    ) -> int:
        """Index of the first frame from ``start`` on that matches."""
        position = start

        def found() -> int | None:
            nonlocal position
            while position < len(self.frames):
                if predicate(self.frames[position]):
                    return position
                position += 1
            return None

        await self.wait_for(lambda: found() is not None, wait_s, "a frame")
        index = position
        self._cursor = max(self._cursor, index + 1)
        return index

    async def next_frame(self, wait_s: float | None = None) -> Any:
        """The next frame no wait has looked at yet (for answers with ``id: null``)."""
        await self.wait_for(lambda: len(self.frames) > self._cursor, wait_s, "a frame")
        self._cursor += 1
        return self.frames[self._cursor - 1]

    async def wait_closed(self, wait_s: float | None = None) -> None:
        """Wait until the agent's output ends (every frame is then in ``frames``)."""
        with anyio.fail_after(self.wait_s if wait_s is None else wait_s):
            while not self.closed:
                await self._changed.wait()
        self._cursor = len(self.frames)

    async def reply(self, request_id: Any, wait_s: float | None = None) -> Reply:
        """The answer to ``request_id``, with the updates that arrived since it was sent.

        Each answer is handed out once: asking again for the same id (``None`` for the
        answers to unparsable input) waits for the next answer carrying it."""
        start = self._sent_at.get(request_id, 0)

        def found() -> int | None:
            for position in range(start, len(self.frames)):
                if position not in self._claimed and is_response(self.frames[position], request_id):
                    return position
            return None

        await self.wait_for(lambda: found() is not None, wait_s, f"the answer to {request_id!r}")
        index = found()
        assert index is not None
        self._claimed.add(index)
        self._cursor = max(self._cursor, index + 1)
        updates = [f["params"] for f in self.frames[start:index] if is_update(f)]
        return Reply(self.frames[index], updates, index)

    async def response(self, request_id: Any, wait_s: float | None = None) -> Frame:
        """The answer frame to ``request_id``."""
        frame: Frame = (await self.reply(request_id, wait_s)).frame
        return frame

    async def call(
        self,
        method: str,
        params: Any = None,
        *,
        stream: str | None = None,
        wait_s: float | None = None,
    ) -> Reply:
        """Send a request and wait for its answer (a result or an error)."""
        request_id = await self.start_request(method, params, stream=stream)
        return await self.reply(request_id, wait_s)

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        stream: str | None = None,
        wait_s: float | None = None,
    ) -> Any:
        """Send a request and return its result (:class:`WireError` on an error answer)."""
        reply = await self.call(method, params, stream=stream, wait_s=wait_s)
        if "error" in reply.frame:
            raise WireError(f"{method} failed: {reply.frame['error']}")
        return reply.frame.get("result")

    async def wait_update(self, kind: str, *, start: int = 0, wait_s: float | None = None) -> int:
        """Index of the first ``session/update`` of ``kind`` from ``start`` on."""
        return await self.wait_frame(
            lambda f: is_update(f) and f["params"]["update"]["sessionUpdate"] == kind,
            start=start,
            wait_s=wait_s,
        )

    # ------------------------------------------------------------------ ACP shortcuts

    async def initialize(
        self, capabilities: Mapping[str, Any] | None = None, *, protocol_version: int = 1
    ) -> Any:
        offered = self.capabilities if capabilities is None else capabilities
        params = {"protocolVersion": protocol_version, "clientCapabilities": dict(offered)}
        return await self.request("initialize", params)

    async def new_session(self, cwd: Path, **extra: Any) -> str:
        result = await self.request("session/new", {"cwd": str(cwd), "mcpServers": [], **extra})
        return str(result["sessionId"])

    async def load(self, session_id: str, cwd: Path) -> Reply:
        params = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
        return await self.call("session/load", params, stream=session_id)

    async def load_session(self, session_id: str, cwd: Path) -> Any:
        params = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
        return await self.request("session/load", params, stream=session_id)

    async def start_prompt(self, session_id: str, text: str) -> Any:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        return await self.start_request("session/prompt", params, stream=session_id)

    async def prompt(self, session_id: str, text: str, wait_s: float | None = None) -> Any:
        """Prompt and return the turn's result (:class:`WireError` on an error answer)."""
        frame = await self.response(await self.start_prompt(session_id, text), wait_s)
        if "error" in frame:
            raise WireError(f"session/prompt failed: {frame['error']}")
        return frame["result"]

    async def set_mode(self, session_id: str, mode_id: str) -> Any:
        params = {"sessionId": session_id, "modeId": mode_id}
        return await self.request("session/set_mode", params, stream=session_id)

    # ------------------------------------------------------------------ what was seen

    def updates(self, session_id: str | None = None) -> list[Frame]:
        """``update`` objects of every ``session/update`` so far (optionally one session's)."""
        return [
            frame["params"]["update"]
            for frame in self.frames
            if is_update(frame)
            and (session_id is None or frame["params"]["sessionId"] == session_id)
        ]

    def text_of(self, session_id: str) -> str:
        """The agent's message text of a session so far."""
        return "".join(
            u["content"].get("text", "")
            for u in self.updates(session_id)
            if u.get("sessionUpdate") == "agent_message_chunk"
        )

    def tool_events(self, tool_call_id: str) -> list[Frame]:
        """The ``tool_call`` / ``tool_call_update`` objects of one tool call, in order."""
        return [
            update
            for update in self.updates()
            if update.get("sessionUpdate") in ("tool_call", "tool_call_update")
            and update.get("toolCallId") == tool_call_id
        ]

    def requests_for(self, method: str) -> list[Frame]:
        return [frame for frame in self.agent_requests if frame["method"] == method]

    def agent_methods(self) -> set[str]:
        return {frame["method"] for frame in self.agent_requests}


# --- Permission answers ------------------------------------------------------------------------


def selected(option_id: str) -> dict[str, Any]:
    """The ACP v1 permission answer that selects ``option_id``."""
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


CANCELLED_ANSWER = {"outcome": {"outcome": "cancelled"}}


def allow(option_id: str) -> Handler:
    """A permission handler that always selects ``option_id``."""

    async def handler(client: WireClient, frame: Frame) -> Any:
        return selected(option_id)

    return handler


async def allow_once(client: WireClient, frame: Frame) -> Any:
    """A permission handler choosing the option of kind ``allow_once`` (cancelled if none)."""
    options = (frame.get("params") or {}).get("options") or []
    chosen = next((o for o in options if o.get("kind") == "allow_once"), None)
    return CANCELLED_ANSWER if chosen is None else selected(chosen["optionId"])
