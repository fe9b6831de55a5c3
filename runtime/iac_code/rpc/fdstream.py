"""anyio byte streams over raw file descriptors (the process's stdin/stdout pipes).

Pipes and sockets are driven by readiness (``anyio.wait_readable`` / ``wait_writable``) on
the event loop: no thread hop per read or write, and nothing left blocked in a worker thread
at exit. Other kinds of descriptor (a regular file, ``/dev/null``) cannot be polled; there a
worker thread does the blocking call, which for those kinds returns promptly.

Writes on a pipe need the descriptor in non-blocking mode, or one large write could stall
the event loop until the client reads. O_NONBLOCK belongs to the open file description, which
may be shared with other processes; it is only set on pipes and sockets (never on a
terminal, where it would disturb the shell) and the caller restores the original flags.
"""

from __future__ import annotations

import os
import stat

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream, ByteSendStream

__all__ = ["FdReceiveStream", "FdSendStream", "is_pollable", "set_nonblocking"]

_READ_SIZE = 1 << 16


def is_pollable(fd: int) -> bool:
    """Whether readiness notification works for ``fd`` (pipe, socket or terminal)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def set_nonblocking(fd: int) -> bool:
    """Put a pipe/socket ``fd`` in non-blocking mode.

    Returns True when this call switched it (the caller restores it with
    ``os.set_blocking(fd, True)``); other kinds of descriptor are left alone.
    """
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) or not os.get_blocking(fd):
        return False
    os.set_blocking(fd, False)
    return True


class FdReceiveStream(ByteReceiveStream):
    """Reads from ``fd`` (which it does not own); ``prefix`` is returned first."""

    def __init__(self, fd: int, *, prefix: bytes = b"") -> None:
        self._fd = fd
        self._prefix = prefix
        self._pollable = is_pollable(fd)
        self._closed = False

    async def receive(self, max_bytes: int = _READ_SIZE) -> bytes:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._prefix:
            data, self._prefix = self._prefix, b""
            return data
        while True:
            if self._pollable:
                await anyio.wait_readable(self._fd)
                try:
                    data = os.read(self._fd, max_bytes)
                except BlockingIOError:  # readiness was spurious; wait again
                    continue
            else:
                data = await anyio.to_thread.run_sync(os.read, self._fd, max_bytes)
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        self._closed = True


class FdSendStream(ByteSendStream):
    """Writes everything it is given to ``fd``; closing it closes ``fd``."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._nonblocking = not os.get_blocking(fd)
        self._closed = False

    async def send(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        try:
            if self._nonblocking:
                await self._send_nonblocking(item)
            else:
                await anyio.to_thread.run_sync(_write_all, self._fd, item)
        except BrokenPipeError:
            raise anyio.BrokenResourceError from None

    async def _send_nonblocking(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            view = view[written:]

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
