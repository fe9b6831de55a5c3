"""The checker's own raw NDJSON JSON-RPC client over an agent process's stdio.

It never interprets ACP semantics: it frames lines, records them, matches responses to the
requests it sent (by the id's JSON form, so ``1`` and ``"1"`` stay distinct), hands
agent→client requests to a handler and lets callers wait, always with a bound, for any frame
they care about. Everything it does is visible in the recorder afterwards.

Waits take an explicit ``timeout`` (ASYNC109 is silenced for them): the per-step bound is
the checker's own product feature (``--timeout``), reported in failure messages, not a
cancellation mechanism callers should compose.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from ..trace_stamps import with_traceparent
from .limits import LineSplitter
from .process import AgentProcess
from .quiet_budget import QuietBudget
from .recorder import Frame, Recorder

#: Method of the request the checker uses as a barrier; agents answer it with -32601.
BARRIER_METHOD = "_acp_conformance/barrier"

_READ_CHUNK = 64 * 1024


class AgentTimeout(Exception):
    """The agent did not produce an expected frame within the bound (an agent failure)."""

    def __init__(
        self, message: str, *, method: str | None = None, null_id_error: Frame | None = None
    ) -> None:
        super().__init__(message)
        #: The request whose answer did not come, when the wait was for one.
        self.method = method
        #: An error response with ``id: null`` that arrived after the request instead: the
        #: agent did answer, without the request's id (not a late answer).
        self.null_id_error = null_id_error


class AgentExited(Exception):
    """The agent's stdout closed (it exited or crashed) while the checker was waiting."""


class AgentOverflow(AgentExited):
    """The checker stopped reading the agent: its output went over a bound of
    :mod:`.limits` (a line over the cap, a flood). Judged once, by
    ``transport.output-bounded``; the check that was waiting is not judged."""


def gone(conn: AgentConnection, what: str) -> AgentExited:
    """The exception for a wait that ended because stdout closed (or was given up on)."""
    if conn.recorder.overflow is not None:
        return AgentOverflow(f"the checker stopped reading the agent: {conn.recorder.overflow}")
    return AgentExited(what)


class NoAnswer:
    """Marker a handler returns to leave an agent→client request unanswered on purpose."""


NO_ANSWER = NoAnswer()


@dataclass
class HandlerError(Exception):
    """Raised by a handler to answer an agent→client request with a JSON-RPC error."""

    code: int
    message: str
    data: Any = None


class AgentRequestHandler(Protocol):
    """Answers requests the agent sends to the client (permission, fs, terminal...)."""

    async def handle(self, method: str, params: Any) -> Any: ...


def id_key(value: Any) -> str:
    """A dictionary key for a JSON-RPC id that keeps ``1``, ``1.0`` and ``"1"`` apart."""
    return json.dumps(value, sort_keys=True)


def id_text(value: Any) -> str | None:
    """An integer or string id as text, so ``1`` and ``"1"`` meet: an answer whose id has
    the text of a request's id but not its type is that request's answer with a changed id
    (``jsonrpc.id-echo``), not an answer to something never sent. None for other values."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return str(value)


@dataclass
class Response:
    """The agent's answer to one of the checker's requests."""

    method: str
    request: Frame
    frame: Frame

    @property
    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = self.frame.message
        return message

    @property
    def is_error(self) -> bool:
        return isinstance(self.message, dict) and "error" in self.message

    @property
    def result(self) -> Any:
        return self.message.get("result") if isinstance(self.message, dict) else None

    @property
    def error(self) -> dict[str, Any] | None:
        err = self.message.get("error") if isinstance(self.message, dict) else None
        return err if isinstance(err, dict) else None

    @property
    def error_code(self) -> Any:
        return self.error.get("code") if self.error else None


class Pending:
    """A request that was sent and whose response may not have arrived yet."""

    def __init__(self, conn: AgentConnection, method: str, key: str, frame: Frame) -> None:
        self._conn = conn
        self.method = method
        self.key = key
        self.request = frame
        self.response: Response | None = None
        self.arrived = anyio.Event()

    def sent_as(self, frame: Frame) -> None:
        """The request went out as ``frame``; an answer that came first (over HTTP, initialize
        is answered inside its POST) gets it too."""
        self.request = frame
        if self.response is not None:
            self.response.request = frame

    @property
    def request_id(self) -> Any:
        """The id the request was sent with (None until it is sent)."""
        msg = self.request.message
        return msg.get("id") if isinstance(msg, dict) else None

    async def wait(
        self,
        timeout: float | None = None,  # noqa: ASYNC109
        *,
        reported: float | None = None,
    ) -> Response:
        """The response, waiting at most ``timeout`` (default: the connection's) for it;
        ``reported``: the whole wait to name when it does not come, when the caller had
        already waited before."""
        asked = self._conn.timeout if timeout is None else timeout
        bound = self._conn.quiet.bound(asked, self.method)
        with anyio.move_on_after(bound):
            while not self.arrived.is_set():
                if self._conn.eof.is_set():
                    raise gone(self._conn, f"agent exited before answering {self.method}")
                await self._conn.wait_change()
        if self.response is None:
            if self._conn.eof.is_set():
                raise gone(self._conn, f"agent exited before answering {self.method}")
            self._conn.recorder.abandoned.add(self.request.seq)
            shortened = bound < asked
            self._conn.quiet.ran_out(bound)
            message = (
                f"no response to {self.method} within {bound:.3g} s"
                if reported is None
                else f"no response to {self.method} within {reported:.3g} s"
            )
            if shortened:
                message += f" ({self._conn.quiet.describe()})"
            stray = self._null_id_error()
            if stray is not None:
                message = (
                    f"no response to {self.method} (id {self.request.message.get('id')!r}) "
                    f"carried its id: an error with id null arrived instead (#{stray.seq}: "
                    f"{stray.text(160)})"
                )
            raise AgentTimeout(message, method=self.method, null_id_error=stray)
        return self.response

    def _null_id_error(self) -> Frame | None:
        """The first error response with ``id: null`` the agent sent after this request."""
        for frame in self._conn.agent_frames(self.request.seq):
            msg = frame.message
            if (
                isinstance(msg, dict)
                and "method" not in msg
                and msg.get("id", 0) is None
                and "error" in msg
            ):
                return frame
        return None


class AgentConnection:
    """One agent process, its recorder and the checker's side of the conversation."""

    def __init__(
        self,
        process: AgentProcess,
        recorder: Recorder,
        handler: AgentRequestHandler | None,
        *,
        timeout: float,
        quiet: QuietBudget | None = None,
    ) -> None:
        self.process = process
        self.recorder = recorder
        self.handler = handler
        self.timeout = timeout
        #: The run's budget for waits on a quiet agent (its own when not given).
        self.quiet = quiet if quiet is not None else QuietBudget()
        self.eof = anyio.Event()
        self._changed = anyio.Event()
        self._write_lock = anyio.Lock()
        #: ``--traceparent``: every prompt sent gets a fresh ``_meta.traceparent``.
        self.trace_prompts = False
        self._pending: dict[str, Pending] = {}
        self._ids = itertools.count(1)
        self._tg: TaskGroup | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def attach(self, tg: TaskGroup) -> None:
        """Start reading stdout and stderr inside ``tg`` (owned by the caller)."""
        self._tg = tg
        tg.start_soon(self._read_stdout)
        tg.start_soon(self._read_stderr)

    async def _read_stdout(self) -> None:
        """Lines of stdout into the recorder, within the bounds of :mod:`.limits`: once one
        is crossed, reading stops and stdout is closed (a flooding agent then gets EPIPE
        instead of filling the pipe)."""
        stream = self.process.process.stdout
        assert stream is not None
        splitter = LineSplitter()
        try:
            while self.recorder.overflow is None:
                try:
                    chunk = await stream.receive(_READ_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    last = splitter.finish()
                    if last is not None:
                        self._on_agent_line(last.data, terminated=False, size=last.size)
                    break
                for line in splitter.feed(chunk):
                    if not self._on_agent_line(line.data, terminated=True, size=line.size):
                        break
                if self.recorder.overflow is None and splitter.pending > splitter.cap:
                    # A line over the cap: what is kept of it is the evidence; the rest is
                    # not read at all.
                    last = splitter.finish()
                    assert last is not None
                    self._on_agent_line(last.data, terminated=False, size=last.size)
        finally:
            if self.recorder.overflow is not None:
                self.process.stop_reading_stdout()
            self.eof.set()
            self._notify_change()

    async def _read_stderr(self) -> None:
        stream = self.process.process.stderr
        assert stream is not None
        while True:
            try:
                chunk = await stream.receive(_READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            self.recorder.stderr.write(chunk)

    def _notify_change(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_change(self) -> None:
        """Sleep until the next frame arrives or stdout closes (callers bound this)."""
        await self._changed.wait()

    # -- inbound ------------------------------------------------------------------------

    def _on_agent_line(self, raw: bytes, *, terminated: bool, size: int | None = None) -> bool:
        """Record and dispatch one line; False once the output budget is spent (the line
        is then not kept)."""
        size = len(raw) if size is None else size
        if not self.recorder.admit(size):
            self._notify_change()
            return False
        oversized = size if size > len(raw) else 0
        frame = self.recorder.add("a2c", raw, terminated=terminated, oversized=oversized)
        if oversized:
            self.recorder.overflow = f"it wrote {frame.decode_error}"
        message = frame.message
        if isinstance(message, dict):
            if "method" in message and "id" in message:
                self._dispatch_agent_request(frame)
            elif "method" not in message and "id" in message:
                pending = self._pending.pop(id_key(message["id"]), None)
                if pending is None:
                    pending = self._pending.pop(self._retyped(message["id"]) or "", None)
                if pending is not None:
                    pending.response = Response(pending.method, pending.request, frame)
                    pending.arrived.set()
                    sent = pending.request  # a placeholder (seq -1) when answered inside its POST
                    self.quiet.answered(pending.method, frame.t - sent.t if sent.seq >= 0 else 0.0)
        self._notify_change()
        return True

    def _retyped(self, rid: Any) -> str | None:
        """The key of a pending request whose id has the text of ``rid`` but another type:
        the answer goes to it (with its wrong id, which ``jsonrpc.id-echo`` judges), so the
        check waiting for it does not time out and charge the defect to its own rule."""
        text = id_text(rid)
        if text is None:
            return None
        return next((k for k, p in self._pending.items() if id_text(p.request_id) == text), None)

    def _dispatch_agent_request(self, frame: Frame) -> None:
        if self._tg is None:
            return
        self._tg.start_soon(self._answer_agent_request, frame.message)

    async def _answer_agent_request(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.get("id")}
        if self.handler is None or not isinstance(method, str):
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            try:
                result = await self.handler.handle(method, message.get("params"))
            except HandlerError as exc:
                reply["error"] = {"code": exc.code, "message": exc.message}
                if exc.data is not None:
                    reply["error"]["data"] = exc.data
            else:
                if isinstance(result, NoAnswer):
                    return
                reply["result"] = result
        try:
            await self.send(reply)
        except (AgentExited, AgentTimeout):
            pass

    # -- outbound -----------------------------------------------------------------------

    async def send_line(self, raw: bytes, *, deliberate: bool = False) -> Frame:
        """Write one line (a newline is appended) and record it."""
        stream = self.process.process.stdin
        assert stream is not None
        if self.recorder.overflow is not None:
            raise gone(self, "agent's stdout is closed")
        async with self._write_lock:
            frame = self.recorder.add("c2a", raw, deliberate=deliberate)
            try:
                with anyio.fail_after(self.timeout):
                    await stream.send(raw + b"\n")
            except TimeoutError as exc:
                raise AgentTimeout(
                    f"agent did not read {len(raw) + 1} bytes from stdin within {self.timeout:g} s"
                ) from exc
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                raise AgentExited("agent's stdin is closed") from exc
        return frame

    async def send(self, message: Any, *, deliberate: bool = False) -> Frame:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        return await self.send_line(data.encode("utf-8"), deliberate=deliberate)

    def next_id(self) -> int:
        return next(self._ids)

    async def start_request(
        self,
        method: str,
        params: Any = None,
        *,
        id: Any = None,
        omit_params: bool = False,
        deliberate: bool = False,
    ) -> Pending:
        """Send a request and return a handle whose ``wait()`` gives its response."""
        rid = self.next_id() if id is None else id
        if self.trace_prompts and method == "session/prompt" and not deliberate:
            params = with_traceparent(params)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if not omit_params:
            message["params"] = {} if params is None else params
        key = id_key(rid)
        # Registered before sending so a fast answer cannot be missed.
        placeholder = Frame(seq=-1, t=0.0, direction="c2a", raw=b"")
        pending = Pending(self, method, key, placeholder)
        self._pending[key] = pending
        pending.sent_as(await self.send(message, deliberate=deliberate))
        return pending

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        id: Any = None,
        timeout: float | None = None,  # noqa: ASYNC109
        deliberate: bool = False,
    ) -> Response:
        pending = await self.start_request(method, params, id=id, deliberate=deliberate)
        return await pending.wait(timeout)

    async def notify(self, method: str, params: Any = None, *, deliberate: bool = False) -> Frame:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return await self.send(message, deliberate=deliberate)

    async def expect_answer_to(self, frame_id: Any, timeout: float | None = None) -> Frame:  # noqa: ASYNC109
        """Wait for the agent's response to a raw line that carried ``frame_id`` (or null)."""
        key = id_key(frame_id)
        since = len(self.recorder.frames)
        return await self.wait_for(
            lambda f: (
                isinstance(f.message, dict)
                and "method" not in f.message
                and "id" in f.message
                and id_key(f.message["id"]) == key
            ),
            timeout=timeout,
            since=since,
            what=f"a response with id {frame_id!r}",
        )

    async def barrier(self, timeout: float | None = None) -> Response:  # noqa: ASYNC109
        """A round trip that proves the agent has read and processed everything before it."""
        return await self.request(BARRIER_METHOD, {}, timeout=timeout)

    # -- waiting ------------------------------------------------------------------------

    async def wait_for(
        self,
        predicate: Callable[[Frame], bool],
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        since: int = 0,
        what: str = "the expected message",
    ) -> Frame:
        """The first agent frame from index ``since`` on that satisfies ``predicate``."""
        bound = self.quiet.bound(self.timeout if timeout is None else timeout)
        cursor = since
        with anyio.move_on_after(bound):
            while True:
                frames = self.recorder.frames
                while cursor < len(frames):
                    frame = frames[cursor]
                    cursor += 1
                    if frame.direction == "a2c" and predicate(frame):
                        return frame
                if self.eof.is_set():
                    raise gone(self, f"agent exited before sending {what}")
                await self.wait_change()
        raise AgentTimeout(f"agent did not send {what} within {bound:g} s")

    def agent_frames(self, since: int = 0) -> list[Frame]:
        return [f for f in self.recorder.frames[since:] if f.direction == "a2c"]

    def updates(self, session_id: str | None = None, since: int = 0) -> list[dict[str, Any]]:
        """``session/update`` params the agent sent (optionally for one session)."""
        out = []
        for frame in self.agent_frames(since):
            msg = frame.message
            if (
                isinstance(msg, dict)
                and msg.get("method") == "session/update"
                and "id" not in msg
                and isinstance(msg.get("params"), dict)
                and (session_id is None or msg["params"].get("sessionId") == session_id)
            ):
                out.append(msg["params"])
        return out

    @property
    def alive(self) -> bool:
        return not self.eof.is_set() and self.process.returncode is None

    @property
    def outstanding(self) -> int:
        """Requests of the checker the agent has not answered yet."""
        return len(self._pending)
