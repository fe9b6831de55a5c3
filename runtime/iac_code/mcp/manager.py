"""The MCP servers of one session: started in the background, stopped with the session.

Design (why it looks like this):

* ``session/new`` must answer fast and must never fail because of an MCP server, so
  :meth:`McpSessionServers.start` only parses the entries and schedules one supervisor task
  in a task group the agent owns for the whole connection; it returns at once. The servers
  start concurrently in that task; each one that fails to start, exits, or does not answer
  ``initialize``/``tools/list`` in time is logged as a warning and skipped.
* The agent calls ``await servers.ready(timeout_s)`` before the first model request of a
  turn: it waits until every server has either listed its tools or failed, at most
  ``timeout_s``. A server still starting after that keeps starting, and its tools appear in
  :meth:`tools` from the next model request on.
* The supervisor task hosts the servers' reader tasks, so they live exactly as long as the
  session's servers. :meth:`aclose` asks it to stop every server (close stdin → wait →
  SIGTERM the group → SIGKILL the group) and waits a bounded time. If the agent's task group
  is cancelled instead (shutdown), the supervisor still stops every process on its way out.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from iac_code.mcp.client import (
    DEFAULT_GRACE_S,
    DEFAULT_REQUEST_TIMEOUT_S,
    DEFAULT_START_TIMEOUT_S,
    McpError,
    McpStdioClient,
)
from iac_code.mcp.config import StdioServerConfig, parse_server_configs
from iac_code.mcp.tools import DEFAULT_CALL_TIMEOUT_S, McpTool, build_mcp_tool
from iac_code.tools.contract import Tool

# Listing tools should be quick; a server that takes longer is skipped like a silent one.
DEFAULT_LIST_TIMEOUT_S = DEFAULT_REQUEST_TIMEOUT_S / 3


class ServerStatus(enum.StrEnum):
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    EXITED = "exited"  # was ready, then the process went away
    CLOSED = "closed"


@dataclass
class _Server:
    config: StdioServerConfig
    client: McpStdioClient | None = None
    status: ServerStatus = ServerStatus.STARTING
    error: str | None = None
    tools: dict[str, McpTool] = field(default_factory=dict)

    @property
    def current_status(self) -> ServerStatus:
        if self.status is ServerStatus.READY and not (self.client and self.client.is_open):
            return ServerStatus.EXITED
        return self.status


class McpSessionServers:
    """The stdio MCP servers of one session and the tools they offer."""

    def __init__(
        self,
        configs: list[StdioServerConfig],
        cwd: Path,
        *,
        logger: logging.Logger,
        base_env: Mapping[str, str] | None = None,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        list_timeout_s: float = DEFAULT_LIST_TIMEOUT_S,
        call_timeout_s: float | None = DEFAULT_CALL_TIMEOUT_S,
        grace_s: float = DEFAULT_GRACE_S,
    ) -> None:
        self._servers = [_Server(config) for config in configs]
        self._cwd = cwd
        self._log = logger
        self._base_env = base_env
        self._start_timeout_s = start_timeout_s
        self._list_timeout_s = list_timeout_s
        self._call_timeout_s = call_timeout_s
        self._grace_s = grace_s
        self._tools: dict[str, McpTool] = {}
        self._starting = len(configs)
        self._settled = anyio.Event()
        self._close_requested = anyio.Event()
        self._closed = anyio.Event()
        self._supervised = False
        if not configs:
            self._settled.set()
            self._closed.set()

    @classmethod
    async def start(
        cls,
        servers: Iterable[Any] | None,
        cwd: Path,
        *,
        logger: logging.Logger,
        task_group: anyio.abc.TaskGroup,
        **options: Any,
    ) -> McpSessionServers:
        """Schedule the stdio servers among ``servers`` (ACP ``mcpServers``) and return.

        ``task_group`` must outlive the session (the agent's connection-wide background
        group). Other entries are skipped with a warning. ``options`` are the keyword
        arguments of the constructor (``base_env``, timeouts, ``grace_s``). Never raises for
        bad entries or failing servers.
        """
        self = cls(parse_server_configs(servers, logger), cwd, logger=logger, **options)
        if self._servers:
            self._supervised = True
            task_group.start_soon(self._supervise)
        return self

    # ------------------------------------------------------------------ queries

    @property
    def is_ready(self) -> bool:
        """True once every server has listed its tools or failed."""
        return self._settled.is_set()

    async def ready(self, timeout_s: float) -> bool:
        """Wait until :attr:`is_ready`, at most ``timeout_s``; returns :attr:`is_ready`."""
        with anyio.move_on_after(timeout_s):
            await self._settled.wait()
        return self.is_ready

    def tools(self) -> dict[str, Tool]:
        """The tools of every server that is up, by the name the model sees."""
        return dict(self._tools)

    def instructions(self) -> dict[str, str]:
        """Usage instructions servers sent with ``initialize``, by server name."""
        found: dict[str, str] = {}
        for server in self._servers:
            client = server.client
            if server.status is ServerStatus.READY and client is not None and client.instructions:
                found[server.config.name] = client.instructions
        return found

    def describe(self) -> list[dict[str, Any]]:
        """One plain dict per server, for logs and diagnostics."""
        return [
            {
                "name": server.config.name,
                "command": server.config.command,
                "status": str(server.current_status),
                "tools": sorted(server.tools),
                "pid": server.client.pid if server.client is not None else None,
                "error": server.error,
            }
            for server in self._servers
        ]

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        """Stop every server; idempotent, shielded and bounded (a few ``grace_s``)."""
        self._close_requested.set()
        if not self._supervised:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(4 * self._grace_s + 2):
            await self._closed.wait()

    async def _supervise(self) -> None:
        try:
            async with anyio.create_task_group() as group:
                for server in self._servers:
                    group.start_soon(self._start_one, server, group)
                await self._close_requested.wait()
                await self._close_clients()
                group.cancel_scope.cancel()
        except Exception:  # a bug here must not take the agent's task group down
            self._log.exception("the MCP supervisor failed")
        finally:
            with anyio.CancelScope(shield=True):
                await self._close_clients()
            self._settled.set()
            self._closed.set()

    async def _close_clients(self) -> None:
        async with anyio.create_task_group() as group:
            for server in self._servers:
                if server.client is not None:
                    group.start_soon(self._close_one, server)

    async def _close_one(self, server: _Server) -> None:
        assert server.client is not None
        await server.client.aclose(grace_s=self._grace_s)
        if server.status in (ServerStatus.STARTING, ServerStatus.READY):
            server.status = ServerStatus.CLOSED

    async def _start_one(self, server: _Server, group: anyio.abc.TaskGroup) -> None:
        config = server.config
        client = McpStdioClient(config, cwd=self._cwd, logger=self._log, base_env=self._base_env)
        server.client = client
        try:
            await client.start(group, timeout_s=self._start_timeout_s)
            listed = await client.list_tools(timeout_s=self._list_timeout_s)
            self._register(server, client, listed)
        except Exception as exc:
            if not self._close_requested.is_set():
                server.status, server.error = ServerStatus.FAILED, str(exc)
                if isinstance(exc, McpError):
                    self._log.warning("MCP server %r skipped: %s", config.name, exc)
                else:
                    self._log.exception("MCP server %r skipped after an error", config.name)
            await client.aclose(grace_s=self._grace_s)
        finally:
            self._starting -= 1
            if self._starting == 0:
                self._settled.set()

    def _register(self, server: _Server, client: McpStdioClient, listed: list[Any]) -> None:
        taken = set(self._tools)
        for info in listed:
            tool = build_mcp_tool(
                server.config.name,
                server.config.label,
                info,
                client,
                taken=taken,
                call_timeout_s=self._call_timeout_s,
                server_identity=server.config.identity,
            )
            taken.add(tool.name)
            server.tools[tool.name] = tool
        self._tools.update(server.tools)
        server.status = ServerStatus.READY
        self._log.info(
            "MCP server %r ready (pid %s): %d tools", server.config.name, client.pid, len(listed)
        )
