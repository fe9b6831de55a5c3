"""The JSON-RPC dispatcher for one peer: untyped (method name + JSON value).

One anyio task group holds the reader loop, the FIFO writer and one task per inbound request
or notification. Each request task runs under its own cancel scope, so ``$/cancel_request``
can stop exactly that request. Outbound requests park a waiter in a pending table that the
reader resolves when the matching response arrives. Method typing lives a layer above, in
:mod:`iac_code.router`.

Lifecycle of :meth:`Connection.serve`: read until EOF (or :meth:`close`), then shut down in a
fixed order:

1. pending outbound requests fail with :class:`ConnectionClosedError` at once: no answer
   can arrive any more, and a handler waiting for one should not sit out the grace period;
2. the ``on_close`` hook runs (the agent cancels its turns and flushes);
3. in-flight handlers get the rest of the grace period, then :meth:`cancel_all`;
4. the writer drains what is queued (bounded), and both streams are closed.

Batches (a JSON array of messages on one line) are answered only when
:attr:`Connection.accepts_batches` is set — the v2 router sets it once protocol v2 is agreed,
because the v2 draft allows them and v1 does not. A batch's entries run one after another in
their order, as if sent one by one and each awaited (one task per batch, beside the other
input); the answers to its requests (and a ``-32600`` for each invalid entry) go out together
as one array, in entry order, and only then does the work a request left for after its
answer (a v2 prompt's turn) begin, so an entry never sees the effect of a later one before
its own answer. A batch of only notifications and responses gets no reply, and an empty array
one ``-32600`` object. A batch over the limits of :mod:`iac_code.rpc.batches` (bytes, entries,
held answers) is refused with one ``-32600`` and runs nothing. Under v1 every array is one
invalid request, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

import anyio
from acp_bindings.errors import (
    InternalError,
    InvalidRequestError,
    ParseError,
    RequestCancelledError,
    RpcError,
    error_from_wire,
)

from iac_code.rpc.batches import (
    DEFAULT_MAX_BATCH_ANSWER_BYTES,
    DEFAULT_MAX_BATCH_BYTES,
    DEFAULT_MAX_BATCH_ENTRIES,
    BatchAnswers,
    OversizedBatch,
    oversized_batch_error,
    too_many_entries_error,
)
from iac_code.rpc.channels import (
    AnyByteReceiveStream,
    AnyByteSendStream,
    ByteStreamSink,
    FrameSink,
    MessageSource,
    NdjsonSource,
)
from iac_code.rpc.context import RequestContext
from iac_code.rpc.envelope import (
    InvalidMessage,
    Notification,
    Request,
    RequestId,
    Response,
    classify,
    is_request_id,
)
from iac_code.rpc.errors import ConnectionClosedError, error_object_for
from iac_code.rpc.frames import ANSWER, BATCH, NOTIFICATION, REQUEST, Frame, session_of
from iac_code.rpc.framing import (
    DEFAULT_MAX_LINE_BYTES,
    DecodeFailure,
    OversizedLine,
    encode_message,
)
from iac_code.rpc.payload_size import LARGE_FRAME_CHARS, at_least_chars
from iac_code.rpc.writer import DEFAULT_MAX_PENDING_BYTES, DEFAULT_MAX_QUEUED_FRAMES, FrameWriter

__all__ = [
    "CANCEL_REQUEST_METHOD",
    "AnyByteReceiveStream",
    "AnyByteSendStream",
    "Connection",
    "OutboundCall",
    "RequestHandler",
]

CANCEL_REQUEST_METHOD = "$/cancel_request"
DEFAULT_SHUTDOWN_GRACE = 0.5
"""Seconds that the ``on_close`` hook and in-flight handlers get after the input ends."""
_CANCELLED_SETTLE = 0.15
"""Seconds for cancelled handlers to unwind and for the writer's final flush."""


class RequestHandler(Protocol):
    """What the connection dispatches to (the router, or a test double)."""

    async def handle_request(self, ctx: RequestContext, method: str, params: object) -> object:
        """Return a JSON-able result, or raise :class:`RpcError` for an error answer.

        ``params`` is the raw JSON value: a dict, a list, or None when absent.
        """
        ...

    async def handle_notification(self, method: str, params: object) -> None:
        """Handle a notification; exceptions are logged, never answered."""
        ...


class OutboundCall:
    """One request sent to the peer, waiting for its answer (see :meth:`Connection.start_request`).

    A layer above that must tell the peer about a request it gives up on (MCP's
    ``notifications/cancelled``) needs its :attr:`id`; :meth:`forget` stops waiting, and a
    late answer is then dropped quietly.
    """

    __slots__ = ("_table", "error", "event", "id", "result")

    def __init__(self, request_id: int, table: dict[int, OutboundCall]) -> None:
        self.id = request_id
        self._table = table
        self.event = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def resolve(self, result: Any = None, error: BaseException | None = None) -> None:
        self.result = result
        self.error = error
        self.event.set()

    @property
    def answered(self) -> bool:
        """Whether the answer (or the end of the connection) has arrived."""
        return self.event.is_set()

    async def result_or_error(self) -> Any:
        """Wait for the answer: its ``result``, or raise its error.

        Raises the :class:`RpcError` subclass of an error answer (by code), or
        :class:`ConnectionClosedError` if the connection ends first.
        """
        await self.event.wait()
        if self.error is not None:
            raise self.error
        return self.result

    def forget(self) -> None:
        """Stop waiting for the answer (idempotent)."""
        if self._table.get(self.id) is self:
            del self._table[self.id]


class _InboundRequest:
    __slots__ = ("context", "scope")

    def __init__(self, context: RequestContext) -> None:
        self.context = context
        self.scope = anyio.CancelScope()


class Connection:
    """A JSON-RPC 2.0 peer: decoded messages in, encoded frames out.

    ``source`` and ``sink`` are the transport (:mod:`iac_code.rpc.channels`); a byte stream in
    either place means newline-delimited JSON over it. ``handler`` may be given later (assign
    :attr:`handler` before :meth:`serve`), so that a handler can be built with the connection
    it will use for outbound calls.
    """

    def __init__(
        self,
        source: MessageSource | AnyByteReceiveStream,
        sink: FrameSink | AnyByteSendStream,
        handler: RequestHandler | None = None,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_queued_frames: int = DEFAULT_MAX_QUEUED_FRAMES,
        max_pending_output_bytes: int = DEFAULT_MAX_PENDING_BYTES,
        max_batch_entries: int = DEFAULT_MAX_BATCH_ENTRIES,
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
        max_batch_answer_bytes: int = DEFAULT_MAX_BATCH_ANSWER_BYTES,
        shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE,
        on_close: Callable[[], Awaitable[None]] | None = None,
        logger: logging.Logger | None = None,
        on_invalid_input: Callable[[RpcError], None] | None = None,
    ) -> None:
        self.handler = handler
        #: Told about input that is no message (bad JSON, an oversized line, an invalid
        #: request) *instead* of answering it with an error. For peers that print what they
        #: like on their stdout and expect no answer to it, such as MCP servers.
        self._on_invalid_input = on_invalid_input
        self._source = (
            source
            if isinstance(source, MessageSource)
            else NdjsonSource(source, max_line_bytes, max_batch_bytes)
        )
        self._max_batch_entries = max_batch_entries
        self._max_batch_answer_bytes = max_batch_answer_bytes
        self._sink = sink if isinstance(sink, FrameSink) else ByteStreamSink(sink)
        self._routes_by_session = self._sink.routes_by_session
        self._shutdown_grace = shutdown_grace
        self._on_close = on_close
        self._logger = logger or logging.getLogger("iac_code.rpc")
        self._writer = FrameWriter(
            self._sink,
            max_queued_frames=max_queued_frames,
            max_pending_bytes=max_pending_output_bytes,
            logger=self._logger,
        )
        self._task_group: anyio.abc.TaskGroup | None = None
        self._read_scope: anyio.CancelScope | None = None
        self._inbound: dict[RequestId, _InboundRequest] = {}
        self._notification_scopes: set[anyio.CancelScope] = set()
        self._running_handlers = 0  # tasks not yet done, including writing their answer
        self._handlers_idle: anyio.Event | None = None
        self._pending: dict[int, OutboundCall] = {}
        self._next_outbound_id = 0
        self._served = False
        self._close_requested = False
        self._input_open = True
        #: Whether a JSON array is a batch (v2) or one invalid request (v1, the default).
        self.accepts_batches = False

    # ------------------------------------------------------------------ lifecycle

    async def serve(self) -> None:
        """Run until the input ends or :meth:`close` is called, then shut down cleanly."""
        if self._served:
            raise RuntimeError("a Connection can be served only once")
        if self.handler is None:
            raise RuntimeError("Connection.handler must be set before serve()")
        self._served = True
        try:
            async with anyio.create_task_group() as task_group:
                self._task_group = task_group
                task_group.start_soon(self._run_writer)
                with anyio.CancelScope() as self._read_scope:
                    if not self._close_requested:
                        await self._read_loop()
                await self._shut_down(task_group)
        finally:
            self._input_open = False
            self._fail_pending()
            with anyio.CancelScope(shield=True):
                await self._close_streams()

    def close(self) -> None:
        """Stop reading and begin the graceful shutdown of :meth:`serve` (idempotent)."""
        self._close_requested = True
        if self._read_scope is not None:
            self._read_scope.cancel()

    def cancel_all(self) -> None:
        """Cancel every in-flight handler; requests among them answer ``-32800``."""
        for inbound in self._inbound.values():
            inbound.scope.cancel()
        for scope in self._notification_scopes:
            scope.cancel()

    @property
    def is_open(self) -> bool:
        """False once the input ended: outbound requests can no longer be answered."""
        return self._input_open

    async def _shut_down(self, task_group: anyio.abc.TaskGroup) -> None:
        self._input_open = False
        self._fail_pending()
        with anyio.move_on_after(self._shutdown_grace):
            if self._on_close is not None:
                try:
                    await self._on_close()
                except Exception:
                    self._logger.exception("on_close hook failed")
            await self._wait_handlers_idle()
        if self._has_handlers():
            self.cancel_all()
            with anyio.move_on_after(_CANCELLED_SETTLE):
                await self._wait_handlers_idle()
        self._writer.close()
        with anyio.move_on_after(_CANCELLED_SETTLE):
            await self._writer.done.wait()
        # Anything still running (a shielded handler, a writer stuck on a full pipe) is cut off.
        task_group.cancel_scope.cancel()

    async def _close_streams(self) -> None:
        for end in (self._sink, self._source):
            try:
                await end.aclose()
            except Exception:  # closing a half-dead pipe must not mask the real outcome
                self._logger.debug("error closing a stream", exc_info=True)

    def _has_handlers(self) -> bool:
        return self._running_handlers > 0

    async def _wait_handlers_idle(self) -> None:
        while self._has_handlers():
            self._handlers_idle = anyio.Event()
            await self._handlers_idle.wait()

    def _handler_finished(self) -> None:
        self._running_handlers -= 1
        if self._handlers_idle is not None and not self._has_handlers():
            self._handlers_idle.set()

    def _fail_pending(self) -> None:
        pending, self._pending = self._pending, {}
        for waiter in pending.values():
            waiter.resolve(error=ConnectionClosedError())

    async def _run_writer(self) -> None:
        await self._writer.run()
        if self._writer.broken:
            self.close()

    # ------------------------------------------------------------------ inbound

    async def _read_loop(self) -> None:
        while True:
            if not self._writer.has_room:
                # Backpressure: the peer is not reading our output. Reading more requests
                # would only pile up more answers in memory, so wait until it catches up.
                self._logger.debug(
                    "output backlog %d bytes: input paused", self._writer.pending_bytes
                )
                await self._writer.wait_for_room()
            try:
                events = await self._source.receive_batch()
            except anyio.EndOfStream:
                return
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
                self._logger.warning("input failed: %r", exc)
                return
            for event in events:
                await self._on_input(event)

    async def _on_input(self, value: object) -> None:
        if isinstance(value, OversizedLine):
            error = InvalidRequestError(
                "Message exceeds the maximum line size", {"maxLineBytes": value.limit}
            )
            await self._reject(None, error)
            return
        if isinstance(value, DecodeFailure):
            await self._reject(None, ParseError(data={"reason": value.reason}))
            return
        if isinstance(value, OversizedBatch):
            await self._reject(None, oversized_batch_error(value))
            return
        if isinstance(value, list) and self.accepts_batches:
            await self._on_batch(value)
            return
        message = classify(value)
        if isinstance(message, Request):
            await self._start_request(message)
        elif isinstance(message, Notification):
            self._start_notification(message)
        elif isinstance(message, Response):
            self._resolve_response(message)
        else:
            await self._on_invalid(message)

    async def _on_batch(self, entries: list[Any]) -> None:
        if not entries:
            await self._reject(None, InvalidRequestError(data={"reason": "an empty batch"}))
            return
        if len(entries) > self._max_batch_entries:
            await self._reject(None, too_many_entries_error(len(entries), self._max_batch_entries))
            return
        assert self._task_group is not None
        self._running_handlers += 1
        self._task_group.start_soon(self._run_batch, entries)

    async def _run_batch(self, entries: list[Any]) -> None:
        """Run the entries in order, write their answers as one array, then start what the
        answered requests left for after their answer (in entry order)."""
        answers = BatchAnswers(self._max_batch_answer_bytes)
        answered: list[RequestContext] = []
        try:
            entries.reverse()  # popped from the end: each entry's objects go once it ran
            while entries:
                message = classify(entries.pop())
                if isinstance(message, Request):
                    if message.id in self._inbound:
                        reason = "a request with this id is in progress"
                        error = InvalidRequestError(data={"reason": reason})
                        answers.add(message.id, _error_frame(message.id, error))
                        continue
                    inbound = _InboundRequest(RequestContext(self, message.id, message.method))
                    self._inbound[message.id] = inbound
                    frame, succeeded = await self._handle(message, inbound)
                    if answers.add(message.id, frame) and succeeded:
                        answered.append(inbound.context)
                elif isinstance(message, Notification):
                    if message.method == CANCEL_REQUEST_METHOD:
                        self._cancel_inbound(message.params)
                    else:
                        scope = anyio.CancelScope()
                        self._notification_scopes.add(scope)
                        await self._notify_handler(message, scope)
                elif isinstance(message, Response):
                    self._resolve_response(message)
                elif message.response_like:
                    self._on_broken_response(message)
                elif self._is_bare_answer(message):
                    reason = "an answer needs result or error"
                    self._on_broken_response(replace(message, reason=reason))
                else:
                    error = InvalidRequestError(data={"reason": message.reason})
                    if self._on_invalid_input is not None:
                        self._on_invalid_input(error)
                    else:
                        answers.add(message.id, _error_frame(message.id, error))
            array = answers.frame()
            if array is not None and not await self._answer(Frame(array, BATCH)):
                return
            assert self._task_group is not None
            for context in answered:
                self._running_handlers += 1
                self._task_group.start_soon(self._run_after_batch, context)
        finally:
            self._handler_finished()

    async def _run_after_batch(self, context: RequestContext) -> None:
        try:
            context._bind()
            await self._run_after_response(context)
        finally:
            self._handler_finished()

    async def _on_invalid(self, message: InvalidMessage) -> None:
        if self._is_bare_answer(message):
            self._on_broken_response(replace(message, reason="an answer needs result or error"))
            return
        if not message.response_like:
            await self._reject(message.id, InvalidRequestError(data={"reason": message.reason}))
            return
        self._on_broken_response(message)

    def _is_bare_answer(self, message: InvalidMessage) -> bool:
        """An id-only object naming a request of ours that waits: its malformed answer (the
        waiter fails, so a permission is denied and a question declined, instead of -32600
        and a turn that hangs until cancelled)."""
        return message.bare_id and isinstance(message.id, int) and message.id in self._pending

    def _on_broken_response(self, message: InvalidMessage) -> None:
        self._logger.warning("malformed response from the peer (%s)", message.reason)
        if isinstance(message.id, int):
            waiter = self._pending.pop(message.id, None)
            if waiter is not None:
                detail = {"reason": message.reason}
                waiter.resolve(error=InternalError("The peer sent a malformed response", detail))

    async def _start_request(self, request: Request) -> None:
        if request.id in self._inbound:
            error = InvalidRequestError(data={"reason": "a request with this id is in progress"})
            await self._send_error(request.id, error)
            return
        self._begin_request(request)

    def _begin_request(self, request: Request) -> None:
        assert self._task_group is not None
        inbound = _InboundRequest(RequestContext(self, request.id, request.method))
        self._inbound[request.id] = inbound
        self._running_handlers += 1
        self._task_group.start_soon(self._run_request, request, inbound)

    async def _run_request(self, request: Request, inbound: _InboundRequest) -> None:
        try:
            frame, succeeded = await self._handle(request, inbound)
            written = await self._answer(Frame(frame, ANSWER, request.id))
            if written and succeeded:
                await self._run_after_response(inbound.context)
        finally:
            # Counted as running until the answer is queued, so shutdown never closes the
            # writer in front of it.
            self._handler_finished()

    async def _handle(self, request: Request, inbound: _InboundRequest) -> tuple[bytes, bool]:
        """Run the handler of a request registered in ``_inbound``; its answer frame, and
        whether it succeeded. The request leaves ``_inbound`` when its handler returns."""
        assert self.handler is not None
        context = inbound.context
        context._bind()
        answered = False
        result: Any = None
        error: dict[str, Any] | None = None
        try:
            with inbound.scope:
                try:
                    result = await self.handler.handle_request(
                        context, request.method, request.params
                    )
                    answered = True
                except Exception as exc:
                    error = error_object_for(exc, method=request.method, logger=self._logger)
        finally:
            # From here a $/cancel_request for this id finds nothing and is ignored.
            del self._inbound[request.id]
        if not answered and error is None:
            # Our scope swallowed the cancellation: $/cancel_request or cancel_all().
            error = RequestCancelledError().to_wire()
        if error is None and at_least_chars(result, LARGE_FRAME_CHARS):
            frame = await anyio.to_thread.run_sync(self._response_frame, request, result, error)
        else:
            frame = self._response_frame(request, result, error)
        return frame, error is None

    async def _answer(self, frame: Frame) -> bool:
        """Queue an answer (or a batch's array); False when the output had closed."""
        try:
            await self._writer.enqueue(frame)
        except ConnectionClosedError:
            self._logger.debug("response to %r dropped: output closed", frame.request_id)
            return False
        return True

    async def _run_after_response(self, context: RequestContext) -> None:
        for callback in context._take_after_response():
            try:
                await callback()
            except ConnectionClosedError:
                return
            except Exception:
                self._logger.exception("after-response callback of %r failed", context.request_id)

    def _response_frame(self, request: Request, result: Any, error: dict[str, Any] | None) -> bytes:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request.id}
        if error is None:
            message["result"] = result
        else:
            message["error"] = error
        try:
            return encode_message(message)
        except (TypeError, ValueError) as exc:
            fallback = error_object_for(exc, method=request.method, logger=self._logger)
            return encode_message({"jsonrpc": "2.0", "id": request.id, "error": fallback})

    def _start_notification(self, notification: Notification) -> None:
        if notification.method == CANCEL_REQUEST_METHOD:
            self._cancel_inbound(notification.params)
            return
        assert self._task_group is not None
        scope = anyio.CancelScope()
        self._notification_scopes.add(scope)
        self._running_handlers += 1
        self._task_group.start_soon(self._run_notification, notification, scope)

    async def _run_notification(self, notification: Notification, scope: anyio.CancelScope) -> None:
        try:
            await self._notify_handler(notification, scope)
        finally:
            self._handler_finished()

    async def _notify_handler(self, notification: Notification, scope: anyio.CancelScope) -> None:
        """Run a notification's handler under ``scope`` (registered by the caller)."""
        assert self.handler is not None
        try:
            with scope:
                await self.handler.handle_notification(notification.method, notification.params)
        except Exception:
            self._logger.exception("notification handler for %s failed", notification.method)
        finally:
            self._notification_scopes.discard(scope)

    def _cancel_inbound(self, params: object) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if not is_request_id(request_id):
            self._logger.debug("ignoring %s without a valid requestId", CANCEL_REQUEST_METHOD)
            return
        inbound = self._inbound.get(request_id)
        if inbound is None or inbound.context.cancel_requested:
            self._logger.debug("ignoring cancel for %r: not in flight", request_id)
            return
        hook = inbound.context._request_cancel()
        if hook is None:
            inbound.scope.cancel()
            return
        try:
            hook()
        except Exception:
            self._logger.exception("cancel hook for %r failed; cancelling the task", request_id)
            inbound.scope.cancel()

    def _resolve_response(self, response: Response) -> None:
        waiter = self._pending.pop(response.id, None) if isinstance(response.id, int) else None
        if waiter is None:
            if isinstance(response.id, int) and 0 <= response.id < self._next_outbound_id:
                # The late answer to a request its caller gave up on (cancelled, timed out).
                self._logger.debug("ignoring a late response to request id %r", response.id)
            else:
                self._logger.warning("ignoring a response to unknown request id %r", response.id)
            return
        if response.error is not None:
            waiter.resolve(error=error_from_wire(response.error))
        else:
            waiter.resolve(result=response.result)

    async def _reject(self, request_id: RequestId | None, error: RpcError) -> None:
        """Answer input that is no valid message, or report it (see ``on_invalid_input``)."""
        if self._on_invalid_input is not None:
            self._on_invalid_input(error)
        else:
            await self._send_error(request_id, error)

    async def _send_error(self, request_id: RequestId | None, error: RpcError) -> None:
        frame = Frame(_error_frame(request_id, error), ANSWER, request_id)
        try:
            await self._writer.enqueue(frame)
        except ConnectionClosedError:
            self._logger.debug("error answer dropped: output closed")

    # ------------------------------------------------------------------ outbound

    async def send_request(self, method: str, params: object = None) -> Any:
        """Call a method on the peer and return its ``result``.

        Raises the :class:`RpcError` subclass matching an error answer (by code), or
        :class:`ConnectionClosedError` if the connection ends first. Cancelling the caller
        forgets the request; a late answer is then ignored.
        """
        call = await self.start_request(method, params)
        try:
            return await call.result_or_error()
        finally:
            call.forget()

    async def start_request(self, method: str, params: object = None) -> OutboundCall:
        """Queue a request to the peer; the returned call waits for its answer.

        The caller must :meth:`OutboundCall.forget` it when it stops waiting. Raises
        :class:`ConnectionClosedError` when no answer can arrive any more.
        """
        if not self._input_open:
            raise ConnectionClosedError()
        request_id = self._next_outbound_id
        self._next_outbound_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        session_id = session_of(params) if self._routes_by_session else None
        frame = Frame(await _encode_outbound(message), REQUEST, request_id, session_id)
        call = self._pending[request_id] = OutboundCall(request_id, self._pending)
        try:
            await self._writer.enqueue(frame)
        except BaseException:
            call.forget()
            raise
        return call

    def call_before_writing(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` before each batch of queued frames is written to the peer."""
        self._writer.before_write = callback

    async def send_notification(self, method: str, params: object = None) -> None:
        """Queue a notification; returns once its place in the output order is fixed.

        Waits only when the output queue is full. Raises :class:`ConnectionClosedError`
        after the output stopped.
        """
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        data = await _encode_outbound(message)
        session_id = session_of(params) if self._routes_by_session else None
        await self._writer.enqueue(Frame(data, NOTIFICATION, None, session_id))


async def _encode_outbound(message: dict[str, Any]) -> bytes:
    """The frame of ``message``; a large one is encoded in a worker thread (issue 19).

    The caller's place in the output order is fixed only when it enqueues, after this
    returns, so a thread hop here cannot reorder what one task sends.
    """
    if at_least_chars(message, LARGE_FRAME_CHARS):
        return await anyio.to_thread.run_sync(encode_message, message)
    return encode_message(message)


def _error_frame(request_id: RequestId | None, error: RpcError) -> bytes:
    return encode_message({"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()})
