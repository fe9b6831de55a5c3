"""The checker's raw JSON-RPC client for a remote agent: Streamable HTTP (+SSE) or WebSocket.

It offers the same interface as :class:`~.connection.AgentConnection` (``send_line``,
``start_request``, ``wait_for``, ``barrier``, ``updates``...) so that every
transport-independent scenario runs unchanged against ``--url``. Only the bytes move
differently:

- HTTP: ``initialize`` is POSTed without ``Acp-Connection-Id`` and answered in the body (200,
  with the header naming the connection); every later message is POSTed with that header (and
  ``Acp-Session-Id`` when it concerns a session) and accepted with 202, its answer arriving on a
  Server-Sent-Events stream: the connection stream (GET without ``Acp-Session-Id``) or one
  stream per session (GET with it). The client opens a session's stream as soon as it learns the
  session id, before it sends anything that the agent could answer there.
- WebSocket: one ``GET`` upgrade, then one JSON-RPC message per text frame, both ways.

Each SSE event's ``data`` (or each WebSocket text frame) is recorded as one agent frame, so the
run-wide checks judge exactly what crossed the wire. When the server refuses a POST at the HTTP
level, its status and body are kept in :attr:`RemoteConnection.rejections`. A JSON-RPC answer in
such a body is recorded as the agent's frame like any other. A request refused without one
is answered, in the transcript, by the refusal in JSON-RPC form: a -32600 error whose message
names the HTTP status and the server's reason — to the protocol, a request the transport
refuses is an invalid request. A 404 (the server no longer knows the connection) ends the
connection instead, like an agent process that exited.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup

from .agent_client import (
    BARRIER_METHOD,
    AgentConnection,
    AgentExited,
    AgentRequestHandler,
    AgentTimeout,
    Response,
    id_key,
)
from .recorder import Frame, Recorder, parse_line
from .remote_http import (
    CONNECTION_HEADER,
    EVENT_STREAM,
    SESSION_HEADER,
    AccessDenied,
    Rejection,
    RemoteTarget,
    header_safe,
    open_event_stream,
    refusal_answer,
    session_of,
)


class RemoteConnection(AgentConnection):
    """One ACP connection to a remote agent, with the stdio connection's interface."""

    def __init__(
        self,
        target: RemoteTarget,
        recorder: Recorder,
        handler: AgentRequestHandler | None,
        *,
        timeout: float,
    ) -> None:
        # There is no process; AgentConnection only touches it in its stdio readers/writers,
        # which this class replaces.
        super().__init__(None, recorder, handler, timeout=timeout)  # type: ignore[arg-type]
        self.target = target
        self.connection_id: str | None = None
        self.rejections: list[Rejection] = []
        #: Session streams opened so far (session id → True once its GET was answered 200).
        self.session_streams: dict[str, bool] = {}
        #: Agent→client request id → the session stream it arrived on (None: connection stream),
        #: so the client's answer carries the matching Acp-Session-Id.
        self._agent_request_routes: dict[str, str | None] = {}
        #: Request id → session, for requests sent with Acp-Session-Id (see cross-stream order).
        self._request_sessions: dict[str, str] = {}
        #: Held answers per session, and barrier id → the session whose answers it releases.
        self._held: dict[str, list[bytes]] = {}
        self._sync_answers: dict[str, str] = {}
        self._http: httpx.AsyncClient | None = None
        self._ws: Any = None
        self._closed = False

    # -- lifecycle ----------------------------------------------------------------------

    def attach(self, tg: TaskGroup) -> None:
        self._tg = tg
        # Every session gets its own long-lived SSE stream (fuzzing creates dozens), and each
        # holds a pooled connection: a small pool would leave POSTs queued behind them.
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout),
            limits=httpx.Limits(max_connections=1024, max_keepalive_connections=16),
        )

    @property
    def alive(self) -> bool:
        return not self.eof.is_set()

    @property
    def opened(self) -> bool:
        """Whether the server accepted a connection (an initialize POST or an upgrade)."""
        return self.connection_id is not None or self._ws is not None

    async def close(self) -> None:
        """End the connection (DELETE or WebSocket close) and stop every reader."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True), anyio.move_on_after(self.timeout):
            if self._ws is not None:
                await self._ws.close()
            elif self._http is not None and self.connection_id is not None:
                try:
                    await self._http.delete(self.target.url, headers=self._headers())
                except httpx.HTTPError:
                    pass
            if self._http is not None:
                await self._http.aclose()
        self.eof.set()
        self._notify_change()

    def _headers(self, session_id: str | None = None) -> dict[str, str]:
        headers = self.target.headers()
        if self.connection_id is not None:
            headers[CONNECTION_HEADER] = self.connection_id
        if session_id is not None:
            headers[SESSION_HEADER] = session_id
        return headers

    # -- inbound ------------------------------------------------------------------------

    def _on_remote_message(self, raw: bytes, session_id: str | None) -> None:
        message: Any
        message, error = parse_line(raw)  # hostile input is judged there, never raised
        if error is not None:
            message = None
        if isinstance(message, dict) and "method" in message and "id" in message:
            self._agent_request_routes[id_key(message["id"])] = session_id
        if isinstance(message, dict) and "method" not in message and "id" in message:
            key = id_key(message["id"])
            sent_for = self._request_sessions.pop(key, None)
            synced = self._sync_answers.get(key)
            if synced is not None:
                self._release(synced)
            elif session_id is None and sent_for is not None and self._hold(sent_for, raw):
                return
        self._on_agent_line(raw, terminated=True)
        if isinstance(message, dict) and "method" not in message:
            result = message.get("result")
            sid = result.get("sessionId") if isinstance(result, dict) else None
            if isinstance(sid, str) and header_safe(sid):
                self._open_session_stream_soon(sid)

    # -- cross-stream order ----------------------------------------------------------------
    #
    # A request sent for a session may be answered on the connection stream while its side
    # effects travel on the session's stream (session/load: the replay, then the answer). The
    # two streams are separate HTTP responses, so their events can arrive in either order. To
    # record them in the order the agent sent them, such an answer is held back while a
    # barrier request goes to the same session: its answer comes on the session stream after
    # everything the agent sent there before, and releases the held answer just ahead of it.

    def _hold(self, session_id: str, raw: bytes) -> bool:
        if self._tg is None or self._closed:
            return False
        self._held.setdefault(session_id, []).append(raw)
        self._tg.start_soon(self._sync_session, session_id)
        return True

    async def _sync_session(self, session_id: str) -> None:
        rid = self.next_id()
        self._sync_answers[id_key(rid)] = session_id
        try:
            pending = await self.start_request(BARRIER_METHOD, {"sessionId": session_id}, id=rid)
            await pending.wait()
        except (AgentTimeout, AgentExited):
            pass
        finally:
            self._sync_answers.pop(id_key(rid), None)
            self._release(session_id)

    def _release(self, session_id: str) -> None:
        for raw in self._held.pop(session_id, []):
            self._on_agent_line(raw, terminated=True)

    async def _read_sse(self, session_id: str | None, ready: anyio.Event) -> None:
        """Read one SSE stream until it ends; the connection stream's end is the agent's EOF."""
        assert self._http is not None
        headers = {**self._headers(session_id), "Accept": EVENT_STREAM}
        try:
            async with open_event_stream(
                self._http, self.target.url, headers, self.timeout
            ) as stream:
                if session_id is not None:
                    self.session_streams[session_id] = stream.status == 200
                ready.set()
                if stream.status != 200:
                    self.rejections.append(Rejection(-1, stream.status, await stream.refusal()))
                    return
                async for event in stream.events():
                    if event.data:
                        self._on_remote_message(event.data.encode("utf-8"), session_id)
        except (httpx.HTTPError, ValueError):
            # The stream broke (or the server sent bytes httpx cannot decode): for the checks
            # this is the end of that stream, judged by what was or was not received.
            pass
        finally:
            ready.set()
            if session_id is None:
                self.eof.set()
            self._notify_change()

    async def _start_stream(self, session_id: str | None) -> None:
        """Open an SSE stream and wait (bounded) until the server answered its GET."""
        if self._tg is None or self._closed:
            return
        ready = anyio.Event()
        self._tg.start_soon(self._read_sse, session_id, ready)
        with anyio.move_on_after(self.timeout):
            await ready.wait()

    def _open_session_stream_soon(self, session_id: str) -> None:
        if self.target.websocket or session_id in self.session_streams or self._tg is None:
            return
        self.session_streams[session_id] = False
        self._tg.start_soon(self._start_stream, session_id)

    async def _read_websocket(self) -> None:
        try:
            async for data in self._ws:
                raw = data if isinstance(data, bytes) else data.encode("utf-8")
                self._on_remote_message(raw, None)
        except Exception:  # the socket ended abnormally: the same as EOF for the checks
            pass
        finally:
            self.eof.set()
            self._notify_change()

    # -- outbound -----------------------------------------------------------------------

    async def send_line(self, raw: bytes, *, deliberate: bool = False) -> Frame:
        """Send one message: a POST (HTTP) or a text frame (WebSocket); recorded first."""
        async with self._write_lock:
            frame = self.recorder.add("c2a", raw, deliberate=deliberate)
            if self.eof.is_set():
                raise AgentExited("the remote connection has ended")
            try:
                with anyio.fail_after(self.timeout):
                    if self.target.websocket:
                        await self._send_websocket(raw)
                    else:
                        await self._post(frame)
            except TimeoutError as exc:
                raise AgentTimeout(
                    f"the server did not accept a {len(raw)}-byte message within {self.timeout:g} s"
                ) from exc
        return frame

    async def _send_websocket(self, raw: bytes) -> None:
        if self._ws is None:
            from websockets.asyncio.client import connect
            from websockets.exceptions import InvalidStatus, WebSocketException

            try:
                self._ws = await connect(
                    self.target.ws_url,
                    additional_headers=self.target.headers(),
                    max_size=None,
                    open_timeout=self.timeout,
                )
            except InvalidStatus as exc:
                if exc.response.status_code == 401:
                    raise AccessDenied(
                        f"the server answered 401 to the upgrade at {self.target.ws_url}: "
                        "check --token"
                    ) from exc
                raise AgentExited(
                    f"WebSocket upgrade refused with HTTP {exc.response.status_code}"
                ) from exc
            except (OSError, WebSocketException) as exc:
                raise AgentExited(f"WebSocket upgrade failed: {exc}") from exc
            self.connection_id = self._ws.response.headers.get(CONNECTION_HEADER)
            assert self._tg is not None
            self._tg.start_soon(self._read_websocket)
        try:
            # Text frames carry JSON-RPC; bytes that are not UTF-8 can only travel as binary.
            try:
                await self._ws.send(raw.decode("utf-8"))
            except UnicodeDecodeError:
                await self._ws.send(raw)
        except Exception as exc:
            raise AgentExited(f"the WebSocket is closed: {exc}") from exc

    async def _post(self, frame: Frame) -> None:
        assert self._http is not None
        message = frame.message if isinstance(frame.message, dict) else None
        is_initialize = (
            message is not None and message.get("method") == "initialize" and "id" in message
        )
        if is_initialize:
            await self._post_initialize(frame, message)
            return
        session_id = self._session_for(message)
        if session_id is not None:
            await self._ensure_session_stream(session_id)
            if message is not None and "method" in message and "id" in message:
                self._request_sessions[id_key(message["id"])] = session_id
        response = await self._post_frame(frame, self._headers(session_id))
        if response.status_code != 202:
            self._on_refusal(frame, message, response)

    async def _post_frame(self, frame: Frame, headers: dict[str, str]) -> httpx.Response:
        """POST ``frame`` as JSON-RPC with ``headers``; a failed POST means the agent is gone."""
        assert self._http is not None
        try:
            return await self._http.post(
                self.target.url,
                content=frame.raw,
                headers={
                    **headers,
                    "Content-Type": "application/json",
                    "Accept": f"application/json, {EVENT_STREAM}",
                },
            )
        except httpx.HTTPError as exc:
            raise AgentExited(f"POST to {self.target.url} failed: {exc}") from exc

    async def _post_initialize(self, frame: Frame, message: dict[str, Any] | None) -> None:
        """Over HTTP an initialize always opens a connection (the transport refuses it on an
        existing one), so a repeated initialize is sent without ``Acp-Connection-Id``, its answer
        recorded, and the extra connection it opened is deleted again."""
        assert self._http is not None
        response = await self._post_frame(frame, self.target.headers())
        opened = response.headers.get(CONNECTION_HEADER)
        if response.status_code != 200 or not opened:
            self._on_refusal(frame, message, response)
            return
        self._on_remote_message(response.content, None)
        if self.connection_id is None:
            self.connection_id = opened
            await self._start_stream(None)
            return
        try:
            await self._http.delete(
                self.target.url, headers={**self.target.headers(), CONNECTION_HEADER: opened}
            )
        except httpx.HTTPError:
            pass

    def _on_refusal(
        self, frame: Frame, message: dict[str, Any] | None, response: httpx.Response
    ) -> None:
        """A POST answered with anything but 202 (or the initialize 200)."""
        if response.status_code == 401:
            raise AccessDenied(f"the server answered 401 to {self.target.url}: check --token")
        rejection = Rejection(frame.seq, response.status_code, response.text)
        self.rejections.append(rejection)
        body: Any
        try:
            body = response.json()
        except ValueError:
            body = None
        if (
            isinstance(body, dict)
            and "method" not in body
            and ("error" in body or "result" in body)
        ):
            # The JSON-RPC answer rode in the refusal (e.g. -32600 for a batch): the agent's frame,
            # recorded at once (it answers this POST; no stream order to restore).
            if message is not None and "id" in message:
                self._request_sessions.pop(id_key(message["id"]), None)
            self._on_remote_message(response.content, None)
            # Over HTTP the body answers the POST that carried the request, even when the
            # server could not (or did not) echo the request's id in it.
            self._settle(message, self.recorder.frames[-1])
            return
        if response.status_code == 404:
            self.eof.set()
        elif message is not None and "method" in message and "id" in message:
            # Recorded like any answer, so run-wide checks see the request was answered.
            answer = self.recorder.add("a2c", refusal_answer(message, rejection))
            self._settle(message, answer)
        self._notify_change()

    def _settle(self, request: dict[str, Any] | None, answer: Frame) -> None:
        """Resolve the waiter of ``request`` (if it still waits) with ``answer``."""
        if request is None or "method" not in request or "id" not in request:
            return
        pending = self._pending.pop(id_key(request["id"]), None)
        if pending is not None:
            pending.response = Response(pending.method, pending.request, answer)
            pending.arrived.set()
        self._notify_change()

    def _session_for(self, message: dict[str, Any] | None) -> str | None:
        if message is None:
            return None
        if "method" not in message and "id" in message:
            # The client's answer to an agent request goes back to the stream it came from.
            return self._agent_request_routes.pop(id_key(message["id"]), None)
        return session_of(message)

    async def _ensure_session_stream(self, session_id: str) -> None:
        if session_id in self.session_streams or self.connection_id is None:
            return
        self.session_streams[session_id] = False
        await self._start_stream(session_id)
