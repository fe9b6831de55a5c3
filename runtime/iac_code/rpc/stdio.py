"""Serve a :class:`Connection` over the process's own stdin/stdout.

stdout must carry protocol frames only (SPEC §1). So the protocol gets private duplicates
of fd 0 and fd 1, and for the time of serving fd 1 (and ``sys.stdout``) point at stderr while
fd 0 points at ``/dev/null``: a stray ``print()`` or a child process that inherits the standard
descriptors can neither corrupt the output stream nor swallow protocol input.

stdin EOF and SIGTERM (or SIGINT) take the same path: :meth:`Connection.close` semantics,
i.e. the ``on_shutdown`` hook runs, in-flight handlers get a grace period, queued output is
flushed, and :func:`serve_stdio` returns so the caller can exit with status 0.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import anyio

from iac_code.rpc.connection import DEFAULT_SHUTDOWN_GRACE, Connection, RequestHandler
from iac_code.rpc.fdstream import FdReceiveStream, FdSendStream, set_nonblocking
from iac_code.rpc.framing import DEFAULT_MAX_LINE_BYTES
from iac_code.rpc.writer import DEFAULT_MAX_PENDING_BYTES

__all__ = ["protocol_descriptors", "serve_stdio"]

_SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def protocol_descriptors() -> Iterator[tuple[int, int]]:
    """Yield private ``(input_fd, output_fd)`` copies of fd 0 / fd 1 and fence off the originals.

    On exit fd 0, fd 1, ``sys.stdout`` and the blocking mode are restored. ``output_fd`` is
    handed to the caller to own (and close).
    """
    if sys.stdout is not None:
        sys.stdout.flush()
    saved_stdout = sys.stdout
    saved_in = os.dup(0)
    saved_out = os.dup(1)
    protocol_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
        os.dup2(2, 1)
    finally:
        os.close(devnull)
    sys.stdout = sys.stderr
    switched = set_nonblocking(protocol_out)
    try:
        yield saved_in, protocol_out
    finally:
        sys.stdout = saved_stdout
        if switched:
            os.set_blocking(saved_out, True)  # same open file description as protocol_out
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


async def _close_on_signals(connection: Connection, logger: logging.Logger) -> None:
    try:
        receiver = anyio.open_signal_receiver(*_SHUTDOWN_SIGNALS)
        with receiver as signals:
            # Keep receiving after the first one: a second signal during shutdown must not
            # fall back to the default action and kill the process mid-flush.
            async for signum in signals:
                logger.info("received signal %s; shutting down", signal.Signals(signum).name)
                connection.close()
    except (RuntimeError, ValueError, NotImplementedError):
        # Signal handlers can only be installed from the main thread; elsewhere (e.g. tests
        # running the server in a worker thread) shutdown comes from EOF only.
        logger.debug("signal handling unavailable here")
        await anyio.sleep_forever()


async def serve_stdio(
    make_handler: Callable[[Connection], RequestHandler],
    *,
    prefix: bytes = b"",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_pending_output_bytes: int = DEFAULT_MAX_PENDING_BYTES,
    on_shutdown: Callable[[], Awaitable[None]] | None = None,
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE,
    logger: logging.Logger | None = None,
) -> None:
    """Serve JSON-RPC on stdin/stdout until EOF or SIGTERM, then return.

    ``make_handler`` receives the connection (for outbound calls) and returns its handler.
    ``prefix`` holds input bytes already read from fd 0 (by the start-up fast path); they
    are processed before anything else. ``on_shutdown`` runs once the input has ended,
    before in-flight handlers are cancelled.
    """
    log = logger or logging.getLogger("iac_code.rpc")
    with protocol_descriptors() as (input_fd, output_fd):
        output = FdSendStream(output_fd)
        try:
            connection = Connection(
                FdReceiveStream(input_fd, prefix=prefix),
                output,
                max_line_bytes=max_line_bytes,
                max_pending_output_bytes=max_pending_output_bytes,
                shutdown_grace=shutdown_grace,
                on_close=on_shutdown,
                logger=log,
            )
            connection.handler = make_handler(connection)
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(_close_on_signals, connection, log)
                await connection.serve()
                task_group.cancel_scope.cancel()
        finally:
            await output.aclose()  # no-op when serve() already closed it
