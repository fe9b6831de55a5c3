"""Where a :class:`~iac_code.rpc.connection.Connection` takes messages from and puts frames.

The connection works on messages: decoded JSON values in, encoded frames out. A transport is
an adapter on each side:

- :class:`NdjsonSource` / :class:`ByteStreamSink` speak newline-delimited JSON over a byte
  stream (stdio, pipes, the in-memory pipes of tests);
- :class:`MessageQueue` takes values a transport has already decoded (an HTTP body, a
  WebSocket text frame), so they reach the connection without being written out as an NDJSON
  line and parsed again; the HTTP/WebSocket transport brings its own :class:`FrameSink` that
  routes each frame to the stream a client reads.

A source hands over everything it already has in one list, so the connection's read loop
costs one await per chunk of input rather than one per message.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, ObjectReceiveStream, ObjectSendStream

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from iac_code.rpc.batches import DEFAULT_MAX_BATCH_BYTES, OversizedBatch, is_array_line
from iac_code.rpc.frames import Frame, frame_bytes
from iac_code.rpc.framing import LineFramer, OversizedLine, decode_line

__all__ = [
    "AnyByteReceiveStream",
    "AnyByteSendStream",
    "ByteStreamSink",
    "FrameSink",
    "InputEvent",
    "MessageQueue",
    "MessageSource",
    "NdjsonSource",
]

AnyByteReceiveStream = ByteReceiveStream | ObjectReceiveStream[bytes]
AnyByteSendStream = ByteSendStream | ObjectSendStream[bytes]

InputEvent = object
"""A decoded JSON value, or a :class:`DecodeFailure` / :class:`OversizedLine` /
:class:`OversizedBatch` to answer."""


class MessageSource(ABC):
    """The inbound side of a connection."""

    @abstractmethod
    async def receive_batch(self) -> list[InputEvent]:
        """The next events, in order (at least one); ``anyio.EndOfStream`` when input ended.

        Transport failures (``BrokenResourceError``, ``OSError``…) propagate: the connection
        treats them as the end of its input.
        """

    @abstractmethod
    async def aclose(self) -> None:
        """Stop reading; a sender on the other end sees the pipe closed."""


class FrameSink(ABC):
    """The outbound side: takes encoded frames (each ends in ``\\n``) in wire order, each
    with its routing facts (:class:`~iac_code.rpc.frames.Frame`)."""

    #: Whether this sink routes by :attr:`Frame.session_id`. A byte stream does not, and
    #: the connection then skips looking the session up (a notification's hot path).
    routes_by_session: bool = True

    @abstractmethod
    async def send_frames(self, frames: list[Frame]) -> None:
        """Deliver ``frames``; may wait (backpressure). Raises like a byte stream when broken."""

    @abstractmethod
    async def aclose(self) -> None:
        """No more frames."""


class NdjsonSource(MessageSource):
    """Lines of a byte stream, each decoded as one JSON value."""

    __slots__ = ("_ended", "_framer", "_max_batch_bytes", "_stream")

    def __init__(
        self,
        stream: AnyByteReceiveStream,
        max_line_bytes: int,
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    ) -> None:
        self._stream = stream
        self._framer = LineFramer(max_line_bytes)
        self._max_batch_bytes = max_batch_bytes
        self._ended = False

    async def receive_batch(self) -> list[InputEvent]:
        while not self._ended:
            try:
                data = await self._stream.receive()
            except anyio.EndOfStream:
                self._ended = True
                tail = self._framer.close()  # a last line without its "\n" still counts
                if tail:
                    return [self._decoded(event) for event in tail]
                break
            events = self._framer.feed(data)
            if events:
                return [self._decoded(event) for event in events]
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        await self._stream.aclose()

    def _decoded(self, event: bytes | OversizedLine) -> InputEvent:
        if isinstance(event, OversizedLine):
            return event
        if len(event) > self._max_batch_bytes and is_array_line(event):
            # Refused undecoded: the objects of a big array cost ~20 times its bytes.
            return OversizedBatch(len(event), self._max_batch_bytes)
        return decode_line(event)


class ByteStreamSink(FrameSink):
    """Frames written to a byte stream; a batch goes out with one write."""

    __slots__ = ("_stream",)
    routes_by_session = False

    def __init__(self, stream: AnyByteSendStream) -> None:
        self._stream = stream

    async def send_frames(self, frames: list[Frame]) -> None:
        if len(frames) == 1:
            await self._stream.send(frames[0].data)
        else:
            await self._stream.send(b"".join(map(frame_bytes, frames)))

    async def aclose(self) -> None:
        await self._stream.aclose()


class MessageQueue(MessageSource):
    """Decoded messages put in by a transport (:meth:`put`); bounded, so a full queue waits."""

    __slots__ = ("_receive", "_send")

    def __init__(self, max_buffered: float = 64) -> None:
        self._send: MemoryObjectSendStream[object]
        self._receive: MemoryObjectReceiveStream[object]
        self._send, self._receive = anyio.create_memory_object_stream[object](max_buffered)

    async def put(self, message: object) -> None:
        """Queue one message; raises ``BrokenResourceError`` once the connection stopped reading."""
        await self._send.send(message)

    def end(self) -> None:
        """No more messages: the connection sees the end of its input."""
        self._send.close()

    async def receive_batch(self) -> list[InputEvent]:
        batch = [await self._receive.receive()]
        while True:
            try:
                batch.append(self._receive.receive_nowait())
            except (anyio.WouldBlock, anyio.EndOfStream):
                return batch

    async def aclose(self) -> None:
        await self._receive.aclose()
