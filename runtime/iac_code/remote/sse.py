"""The body of a GET stream: Server-Sent Events, one JSON-RPC message per event.

Each event is ``id: N`` plus ``data: <json>``; the id is what a reconnecting client sends
back as ``Last-Event-ID``. While the stream is quiet a comment line keeps intermediaries from
timing the response out. The response ends cleanly when the stream finishes (DELETE, idle
close, server shutdown); a client that goes away just detaches, leaving the rest queued.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
from starlette.types import Receive, Scope, Send

from iac_code.remote.streams import OutboundStream, StreamEvent, StreamReader

__all__ = ["SseResponse", "encode_event"]

KEEPALIVE = b": keep-alive\n\n"
_BURST_EVENTS = 512  # events already queued are written together, up to this many


def encode_event(event: StreamEvent) -> bytes:
    return b"id: %d\ndata: %s\n\n" % (event.id, event.data)


class SseResponse:
    """A pure ASGI response reading from ``stream`` through an already attached reader."""

    def __init__(
        self,
        stream: OutboundStream,
        reader: StreamReader,
        *,
        keepalive_seconds: float,
        on_detach: Callable[[], None],
    ) -> None:
        self._stream = stream
        self._reader = reader
        self._keepalive = keepalive_seconds
        self._on_detach = on_detach

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream"),
                        (b"cache-control", b"no-cache, no-store"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
            async with anyio.create_task_group() as group:
                group.start_soon(self._watch_disconnect, receive, group.cancel_scope)
                await self._write_events(send)
                group.cancel_scope.cancel()
        except OSError:
            pass  # the client went away mid-write
        finally:
            self._stream.detach(self._reader)
            self._on_detach()

    async def _write_events(self, send: Send) -> None:
        # The first body message commits the headers, so the client sees the stream open now.
        await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
        while True:
            with anyio.move_on_after(self._keepalive) as quiet:
                event = await self._stream.next_event(self._reader)
            if quiet.cancelled_caught:
                await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
                continue
            if event is None:
                break
            burst = [event, *self._stream.ready_events(self._reader, _BURST_EVENTS)]
            body = b"".join(encode_event(item) for item in burst)
            await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    @staticmethod
    async def _watch_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                scope.cancel()
                return
