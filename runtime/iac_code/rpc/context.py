"""Per-request state handed to handlers, and the way to reach it from generated stubs.

The generated ``AgentHandlers`` methods take only ``params``, so a handler that needs its
request (to register a cancel hook, or to call the client) reads it from
:func:`current_request`: the connection sets it inside each request's own task, and
contextvars are task-local.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING

import anyio

from iac_code.rpc.envelope import RequestId

if TYPE_CHECKING:
    from iac_code.rpc.peer import Peer

__all__ = ["AfterResponse", "CancelHook", "RequestContext", "current_request"]

AfterResponse = Callable[[], Awaitable[None]]
CancelHook = Callable[[], None]
"""Called (synchronously, in the connection's reader) when ``$/cancel_request`` names the
request. It should only *start* ending the work, e.g. cancel the turn's own scope."""

_current_request: ContextVar[RequestContext] = ContextVar("iac_code_rpc_request")


def current_request() -> RequestContext:
    """The request being handled by the calling task; ``LookupError`` outside of one."""
    return _current_request.get()


class RequestContext:
    """One inbound request while it is being handled."""

    __slots__ = (
        "_after_response",
        "_cancel_event",
        "_cancel_hook",
        "_cancel_requested",
        "connection",
        "method",
        "request_id",
    )

    def __init__(self, connection: Peer, request_id: RequestId, method: str) -> None:
        self.connection = connection
        self.request_id = request_id
        self.method = method
        self._cancel_hook: CancelHook | None = None
        self._cancel_requested = False
        self._cancel_event: anyio.Event | None = None
        self._after_response: list[AfterResponse] = []

    def after_response(self, callback: AfterResponse) -> None:
        """Run ``callback()`` (a coroutine function) once the success response is queued.

        For notifications that must follow a response, e.g. ``available_commands_update``
        after ``session/new`` (the client needs the session id first). Not run when the
        request ends with an error.
        """
        self._after_response.append(callback)

    def _take_after_response(self) -> list[AfterResponse]:
        callbacks, self._after_response = self._after_response, []
        return callbacks

    def on_cancel(self, hook: CancelHook | None) -> None:
        """Handle ``$/cancel_request`` gracefully instead of having the task cancelled.

        With a hook set the connection calls it and leaves the task alone, so the handler
        can return its normal result (``session/prompt`` answers ``stopReason:
        "cancelled"``). Without a hook the request's scope is cancelled and it is answered
        ``-32800``. ``None`` removes the hook. If the cancellation already arrived, a new hook
        is called at once.
        """
        self._cancel_hook = hook
        if hook is not None and self._cancel_requested:
            hook()

    @property
    def cancel_requested(self) -> bool:
        """Whether the client asked to cancel this request."""
        return self._cancel_requested

    async def wait_cancel_requested(self) -> None:
        """Return once the client has asked to cancel this request."""
        if self._cancel_requested:
            return
        if self._cancel_event is None:
            self._cancel_event = anyio.Event()
        await self._cancel_event.wait()

    def _request_cancel(self) -> CancelHook | None:
        """Record the cancellation; returns the hook to call, or None to cancel the scope."""
        self._cancel_requested = True
        if self._cancel_event is not None:
            self._cancel_event.set()
        return self._cancel_hook

    def _bind(self) -> None:
        _current_request.set(self)
