"""In-memory transports, for tests of anything that speaks through a :class:`Connection`.

A pipe is an anyio memory object stream of ``bytes``: the connection reads and writes raw
NDJSON through it exactly as it would through stdio, so tests see real frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from iac_code.rpc.connection import Connection, RequestHandler
from iac_code.rpc.framing import decode_line, encode_message

__all__ = ["RawPeer", "memory_byte_pipe", "memory_connection_pair", "raw_peer_connection"]


def memory_byte_pipe(
    max_buffered_chunks: float = 64,
) -> tuple[MemoryObjectSendStream[bytes], MemoryObjectReceiveStream[bytes]]:
    """One direction of an in-memory byte transport: (write end, read end)."""
    return anyio.create_memory_object_stream[bytes](max_buffered_chunks)


def memory_connection_pair(
    first_handler: RequestHandler | None,
    second_handler: RequestHandler | None,
    **options: Any,
) -> tuple[Connection, Connection]:
    """Two connections wired to each other; run both ``serve()`` in a task group.

    ``options`` go to both constructors (e.g. ``max_line_bytes``). Closing one side ends the
    other: its input reaches EOF.
    """
    a_to_b_send, a_to_b_receive = memory_byte_pipe()
    b_to_a_send, b_to_a_receive = memory_byte_pipe()
    first = Connection(b_to_a_receive, a_to_b_send, first_handler, **options)
    second = Connection(a_to_b_receive, b_to_a_send, second_handler, **options)
    return first, second


@dataclass
class RawPeer:
    """The far end of a connection, seen as raw lines: send bytes, read decoded frames.

    For tests that must control the exact bytes (bad JSON, odd ids) or check the exact
    order of frames. Every read waits at most ``timeout`` seconds.
    """

    to_connection: MemoryObjectSendStream[bytes]
    from_connection: MemoryObjectReceiveStream[bytes]
    timeout: float = 5.0
    _buffer: bytes = b""

    async def send_bytes(self, data: bytes) -> None:
        await self.to_connection.send(data)

    async def send(self, message: object) -> None:
        """Send one message as a frame."""
        await self.to_connection.send(encode_message(message))

    async def receive(self) -> Any:
        """The next frame written by the connection, decoded."""
        with anyio.fail_after(self.timeout):
            while b"\n" not in self._buffer:
                self._buffer += await self.from_connection.receive()
        line, _, self._buffer = self._buffer.partition(b"\n")
        return decode_line(line)

    async def receive_until_eof(self) -> list[Any]:
        """Every remaining frame, until the connection closes its output."""
        frames: list[Any] = []
        with anyio.fail_after(self.timeout):
            while True:
                try:
                    self._buffer += await self.from_connection.receive()
                except anyio.EndOfStream:
                    break
        for line in self._buffer.split(b"\n"):
            if line:
                frames.append(decode_line(line))
        self._buffer = b""
        return frames

    def close_input(self) -> None:
        """Signal EOF to the connection's reader."""
        self.to_connection.close()


def raw_peer_connection(
    handler: RequestHandler | None, **options: Any
) -> tuple[Connection, RawPeer]:
    """A connection plus a :class:`RawPeer` holding the other ends of its streams."""
    to_connection_send, to_connection_receive = memory_byte_pipe()
    from_connection_send, from_connection_receive = memory_byte_pipe()
    connection = Connection(to_connection_receive, from_connection_send, handler, **options)
    return connection, RawPeer(to_connection_send, from_connection_receive)
