"""The live remote connections of one server: creation under a limit, lookup, idle reaping."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.abc import TaskGroup

from iac_code.remote.options import RemoteLimits
from iac_code.remote.remote_connection import HandlerFactory, RemoteConnection, Transport

__all__ = ["ConnectionRegistry", "TooManyConnections"]

log = logging.getLogger("iac_code.remote")

_SHUTDOWN_GRACE = 5.0  # seconds for every connection to finish closing on server shutdown


class TooManyConnections(Exception):
    """``max_connections`` connections are live already."""


class ConnectionRegistry:
    def __init__(self, make_handler: HandlerFactory, limits: RemoteLimits) -> None:
        self.limits = limits
        self._make_handler = make_handler
        self._connections: dict[str, RemoteConnection] = {}
        self._task_group: TaskGroup | None = None
        self.shutting_down = False
        #: Bytes of POST bodies being received right now, all requests together (capped by
        #: ``limits.max_buffered_body_bytes``; kept by the HTTP endpoint).
        self.receiving_body_bytes = 0

    @asynccontextmanager
    async def running(self) -> AsyncIterator[ConnectionRegistry]:
        """Own the connections' tasks for the lifetime of the application."""
        self.shutting_down = False  # an application may be started again after a shutdown
        async with anyio.create_task_group() as group:
            self._task_group = group
            group.start_soon(self._reap_idle)
            try:
                yield self
            finally:
                await self.close_all()
                group.cancel_scope.cancel()
                self._task_group = None

    def __len__(self) -> int:
        return len(self._connections)

    def get(self, connection_id: str, principal: str | None = None) -> RemoteConnection | None:
        """The live connection, if it belongs to ``principal``: another principal's
        connection is answered exactly like an unknown one."""
        connection = self._connections.get(connection_id)
        if connection is None or connection.closing or connection.principal != principal:
            return None
        return connection

    async def create(self, transport: Transport, principal: str | None = None) -> RemoteConnection:
        if self._task_group is None or self.shutting_down:
            raise TooManyConnections("the server is shutting down")
        if len(self._connections) >= self.limits.max_connections:
            raise TooManyConnections(f"at most {self.limits.max_connections} connections")
        connection = RemoteConnection(
            transport, self._make_handler, self.limits, principal=principal
        )
        self._connections[connection.id] = connection
        await self._task_group.start(self._run, connection)
        return connection

    async def _run(
        self, connection: RemoteConnection, *, task_status: anyio.abc.TaskStatus[None]
    ) -> None:
        try:
            await connection.run(task_status=task_status)
        except Exception:
            log.exception("remote connection %s failed", connection.id)
        finally:
            self._connections.pop(connection.id, None)

    async def wait_closed(self, connection_id: str) -> None:
        """Wait until a connection (even one already closing) has fully shut down."""
        connection = self._connections.get(connection_id)
        if connection is not None:
            await connection.closed.wait()

    def remove(self, connection_id: str, principal: str | None = None) -> bool:
        """End a connection at the client's request (DELETE); False when unknown."""
        connection = self.get(connection_id, principal)
        if connection is None:
            return False
        connection.abort()
        return True

    async def drain(self, grace_seconds: float) -> None:
        """SIGTERM: take no new connection, let running requests (turns) finish for up to
        ``grace_seconds``, then close every connection (which cancels what still runs,
        persists it and releases the sessions' locks or leases)."""
        self.shutting_down = True
        with anyio.move_on_after(grace_seconds):
            # Polled: answers leave through each connection's output router, which has no
            # event for "the last one" across connections; 50 ms is nothing next to a turn.
            while any(c.busy for c in self._connections.values()):  # noqa: ASYNC110
                await anyio.sleep(0.05)
        await self.close_all()

    async def close_all(self) -> None:
        """Server shutdown: close every connection gracefully and wait (bounded)."""
        self.shutting_down = True
        connections = list(self._connections.values())
        for connection in connections:
            connection.close()
        with anyio.move_on_after(_SHUTDOWN_GRACE):
            for connection in connections:
                await connection.closed.wait()

    async def _reap_idle(self) -> None:
        timeout = self.limits.idle_timeout_seconds
        period = max(0.05, min(timeout / 4, 5.0))
        while True:
            await anyio.sleep(period)
            now = anyio.current_time()
            for connection in list(self._connections.values()):
                if connection.has_reader:
                    connection.touch()
                elif now - connection.last_activity > timeout and not connection.closing:
                    log.info("closing idle connection %s", connection.id)
                    connection.close()
