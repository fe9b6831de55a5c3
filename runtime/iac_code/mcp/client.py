"""A Model Context Protocol client for one server started as a local process (stdio).

MCP is JSON-RPC 2.0, one message per line, so the server is one more peer of the agent's
own :class:`~iac_code.rpc.connection.Connection` (framing, ids, pending answers, one
ordered writer, requests the server sends us); this module is the typed MCP layer over it:
the ``initialize`` handshake, ``tools/list`` and ``tools/call``, MCP's
``notifications/cancelled`` for requests we give up on, and MCP errors in place of ACP's.
The process itself (its group, environment, stderr and shutdown ladder) is
:mod:`iac_code.mcp.server_process`.

Every wait is bounded: the handshake, each request, writes to the server's stdin, the
cancellation notice and the shutdown ladder (close stdin → wait → SIGTERM the group →
SIGKILL the group). Requests the server sends us are answered: ``ping`` with an empty
result, everything else (sampling, roots, elicitation — none advertised) with -32601.
Output that is no message (a server printing logs on its stdout) is logged, not answered.

The I/O tasks run in a task group the caller provides and that outlives the client (the
session's MCP supervisor, see :mod:`iac_code.mcp.manager`); :meth:`McpStdioClient.aclose`
must be called to stop the process.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from acp_bindings.errors import MethodNotFoundError, RpcError

from iac_code import __version__, telemetry
from iac_code.child_env import child_environment
from iac_code.mcp.config import StdioServerConfig
from iac_code.mcp.server_process import BoundedWrites, ServerProcess
from iac_code.rpc.connection import Connection, OutboundCall
from iac_code.rpc.context import RequestContext
from iac_code.rpc.errors import ConnectionClosedError

JsonDict = dict[str, Any]

#: The revision we ask for; servers may answer with an older one they speak.
LATEST_PROTOCOL_VERSION = "2025-06-18"
#: Revisions whose tools/list and tools/call shapes we know (all compatible for tools).
KNOWN_PROTOCOL_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18"})
CLIENT_INFO = {"name": "iac-code", "version": __version__}

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
DEFAULT_START_TIMEOUT_S = 10.0
DEFAULT_REQUEST_TIMEOUT_S = 30.0
DEFAULT_GRACE_S = 2.0
# A server that does not read its stdin for this long is treated as broken.
WRITE_TIMEOUT_S = 10.0
# The cancellation notice is best effort: never hold up the cancelled caller for long.
CANCEL_NOTICE_TIMEOUT_S = 1.0
# tools/list pages followed before giving up (a server repeating cursors forever).
MAX_TOOL_PAGES = 100
# Answers to the server's own requests (ping) get this long once the connection closes.
_SHUTDOWN_GRACE_S = 0.2


class McpError(Exception):
    """Base of every failure talking to an MCP server."""


class McpStartError(McpError):
    """The server could not be started or did not complete the handshake."""


class McpConnectionClosed(McpError):
    """The server is gone (exited, closed its output, or we closed it)."""


class McpTimeoutError(McpError):
    """The server did not answer in time (the request was cancelled on the server)."""


class McpRequestError(McpError):
    """The server answered a request with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True)
class McpToolInfo:
    """One entry of ``tools/list`` as we use it."""

    name: str
    description: str
    input_schema: JsonDict
    title: str | None = None
    annotations: JsonDict = field(default_factory=dict)

    @property
    def read_only_hint(self) -> bool:
        return self.annotations.get("readOnlyHint") is True

    @classmethod
    def from_wire(cls, raw: Any) -> McpToolInfo | None:
        """Parse one listed tool; None when it has no usable name."""
        if not isinstance(raw, Mapping):
            return None
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            return None
        description = raw.get("description")
        schema = raw.get("inputSchema")
        annotations = raw.get("annotations")
        title = raw.get("title")
        if not isinstance(title, str) and isinstance(annotations, Mapping):
            title = annotations.get("title")
        return cls(
            name=name,
            description=description if isinstance(description, str) else "",
            input_schema=dict(schema) if isinstance(schema, Mapping) else {},
            title=title if isinstance(title, str) and title else None,
            annotations=dict(annotations) if isinstance(annotations, Mapping) else {},
        )


class _ServerRequests:
    """What the connection hands us from the server: its requests and notifications."""

    def __init__(self, name: str, logger: logging.Logger) -> None:
        self._name = name
        self._log = logger

    async def handle_request(self, ctx: RequestContext, method: str, params: object) -> object:
        if method == "ping":
            return {}
        self._log.debug("MCP server %s asked for unsupported %s", self._name, method)
        raise MethodNotFoundError(f"Method not found: {method}")

    async def handle_notification(self, method: str, params: object) -> None:
        if method == "notifications/message" and isinstance(params, Mapping):
            self._log.info(
                "MCP server %s log (%s): %s", self._name, params.get("level"), params.get("data")
            )
        elif method == "notifications/tools/list_changed":
            # The tool set of a session is fixed once listed; a changed list shows next session.
            self._log.info("MCP server %s changed its tool list", self._name)
        else:
            self._log.debug("MCP server %s notification %s", self._name, method)


class McpStdioClient:
    """The connection to one stdio MCP server. Use :meth:`start`, then requests, then
    :meth:`aclose` (always, also after a failed call)."""

    def __init__(
        self,
        config: StdioServerConfig,
        *,
        cwd: Path,
        logger: logging.Logger,
        base_env: Mapping[str, str] | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.config = config
        self._cwd = cwd
        self._log = logger
        self._base_env = base_env
        self._max_line_bytes = max_line_bytes
        self._server: ServerProcess | None = None
        self._connection: Connection | None = None
        self._stdin: BoundedWrites | None = None
        self._closed = False
        self._close_reason = "the server is not started"
        self._closing = False
        self._shutdown_done = anyio.Event()
        self._served = anyio.Event()
        self._io_scope = anyio.CancelScope()
        self._io_done = anyio.Event()
        #: Filled by the handshake.
        self.protocol_version: str | None = None
        self.server_info: JsonDict = {}
        self.capabilities: JsonDict = {}
        self.instructions: str | None = None

    # ------------------------------------------------------------------ state

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def pid(self) -> int | None:
        """The server's pid, which is also its process group id."""
        return self._server.pid if self._server is not None else None

    @property
    def returncode(self) -> int | None:
        return self._server.process.returncode if self._server is not None else None

    @property
    def is_open(self) -> bool:
        return self._server is not None and not self._closed

    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr (for error messages)."""
        return self._server.stderr_tail() if self._server is not None else []

    # ------------------------------------------------------------------ lifecycle

    def _environment(self) -> dict[str, str]:
        # The agent passes its environment already filtered (iac_code.child_env); without
        # one the default filter still keeps the agent's credentials from the server. What
        # the client gave for this server is passed as is.
        env = child_environment() if self._base_env is None else dict(self._base_env)
        env.update(self.config.env)
        return env

    async def start(
        self, task_group: anyio.abc.TaskGroup, *, timeout_s: float = DEFAULT_START_TIMEOUT_S
    ) -> None:
        """Start the process and complete the ``initialize`` handshake within ``timeout_s``.

        Raises :class:`McpStartError` (after stopping the process) when the program cannot
        be started, exits, or does not answer in time. ``task_group`` hosts the I/O tasks
        and must outlive the client.
        """
        if self._server is not None:
            raise RuntimeError("an McpStdioClient can be started only once")
        try:
            self._server = await ServerProcess.spawn(
                [self.config.command, *self.config.args],
                cwd=self._cwd,
                env=self._environment(),
                name=self.name,
                logger=self._log,
            )
        except OSError as exc:
            self._shutdown_done.set()
            raise McpStartError(
                f"could not start {self.config.command!r}: {exc.strerror or exc}"
            ) from exc
        process = self._server.process
        assert process.stdin is not None and process.stdout is not None
        self._stdin = BoundedWrites(process.stdin, WRITE_TIMEOUT_S)
        self._connection = Connection(
            process.stdout,
            self._stdin,
            _ServerRequests(self.name, self._log),
            max_line_bytes=self._max_line_bytes,
            shutdown_grace=_SHUTDOWN_GRACE_S,
            logger=self._log,
            on_invalid_input=self._on_invalid_output,
        )
        self._connection.accepts_batches = True  # MCP 2025-03-26 allowed batches
        self._closed = False
        self._close_reason = ""
        task_group.start_soon(self._run_io, self._server, self._connection)
        try:
            with anyio.fail_after(timeout_s):
                result = await self.request(
                    "initialize",
                    {
                        "protocolVersion": LATEST_PROTOCOL_VERSION,
                        "capabilities": {},
                        "clientInfo": CLIENT_INFO,
                    },
                    timeout_s=None,
                    cancellable=False,  # the protocol forbids cancelling initialize
                )
            self._accept_initialize(result)
            await self.notify("notifications/initialized")
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await self.aclose()
            if isinstance(exc, TimeoutError):
                raise McpStartError(
                    f"no answer to initialize within {timeout_s:g} s{self._stderr_hint()}"
                ) from None
            if isinstance(exc, McpError):
                raise McpStartError(f"initialize failed: {self._failure(exc)}") from exc
            raise

    def _failure(self, exc: McpError) -> str:
        """Describe a handshake failure with the exit code and stderr when there are any."""
        detail = str(exc)
        code = self.returncode
        if isinstance(exc, McpConnectionClosed) and code is not None:
            detail = f"the server exited with code {code}"
        return detail + self._stderr_hint()

    def _stderr_hint(self) -> str:
        tail = self.stderr_tail()
        return f"; stderr: {' | '.join(tail[-3:])}" if tail else ""

    def _accept_initialize(self, result: Any) -> None:
        if not isinstance(result, Mapping) or not isinstance(result.get("protocolVersion"), str):
            raise McpError("the initialize result has no protocolVersion")
        self.protocol_version = result["protocolVersion"]
        if self.protocol_version not in KNOWN_PROTOCOL_VERSIONS:
            # Tools look the same in every revision so far; try rather than refuse.
            self._log.info(
                "MCP server %s speaks protocol %s, which we do not know; trying anyway",
                self.name,
                self.protocol_version,
            )
        info, capabilities = result.get("serverInfo"), result.get("capabilities")
        self.server_info = dict(info) if isinstance(info, Mapping) else {}
        self.capabilities = dict(capabilities) if isinstance(capabilities, Mapping) else {}
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None

    async def aclose(self, *, grace_s: float = DEFAULT_GRACE_S) -> None:
        """Stop the server: close its stdin, wait up to ``grace_s`` for it to exit, then
        SIGTERM its process group and SIGKILL it after another ``grace_s``.

        Idempotent, shielded from cancellation, and bounded (about ``3 * grace_s``).
        """
        server, connection = self._server, self._connection
        if server is None or connection is None:
            return
        if self._closing:
            with anyio.move_on_after(3 * grace_s + 1):
                await self._shutdown_done.wait()
            return
        self._closing = True
        with anyio.CancelScope(shield=True):
            try:
                self._mark_closed("the connection to the server was closed")
                # Ending the connection closes the server's stdin: a polite server exits.
                connection.close()
                with anyio.move_on_after(grace_s):
                    await self._served.wait()
                await server.stop(grace_s)
                # stderr ends at EOF, after its last lines; a process that detached from
                # the group may hold the pipe open, so do not wait long.
                with anyio.move_on_after(grace_s):
                    await self._io_done.wait()
                self._io_scope.cancel()
                await server.release(grace_s)
            finally:
                self._shutdown_done.set()
        self._log.debug("MCP server %s stopped (exit code %s)", self.name, self.returncode)

    def _mark_closed(self, reason: str) -> None:
        """No more requests; the first reason given is the one callers are told."""
        if not self._closed:
            self._closed, self._close_reason = True, reason

    def _gone(self) -> McpConnectionClosed:
        """The error for a call the connection could not complete."""
        failure = self._stdin.failure if self._stdin is not None else None
        self._mark_closed(failure or "the server closed its output")
        return McpConnectionClosed(self._close_reason)

    # ------------------------------------------------------------------ requests

    async def request(
        self,
        method: str,
        params: JsonDict | None = None,
        *,
        timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S,
        cancellable: bool = True,
    ) -> Any:
        """Send a request and return its result.

        Raises :class:`McpRequestError` for an error answer, :class:`McpTimeoutError` after
        ``timeout_s`` seconds (None: wait as long as the caller does) and
        :class:`McpConnectionClosed` when the server goes away. On timeout or cancellation
        the server is told with ``notifications/cancelled`` and the answer is no longer
        awaited (a late answer is ignored).
        """
        call = await self._start_request(method, params)
        try:
            with anyio.fail_after(timeout_s):
                return await call.result_or_error()
        except TimeoutError:
            if cancellable:
                await self._send_cancelled(call.id, f"no answer within {timeout_s:g} s")
            raise McpTimeoutError(f"{method} got no answer within {timeout_s:g} s") from None
        except anyio.get_cancelled_exc_class():
            if cancellable and not call.answered:
                with anyio.CancelScope(shield=True):
                    await self._send_cancelled(call.id, "the request was cancelled")
            raise
        except RpcError as exc:
            raise McpRequestError(exc.code, exc.message, exc.data) from None
        except ConnectionClosedError:
            raise self._gone() from None
        finally:
            call.forget()

    async def _start_request(self, method: str, params: JsonDict | None) -> OutboundCall:
        if self._closed or self._connection is None:
            raise McpConnectionClosed(self._close_reason or "the server is not running")
        try:
            return await self._connection.start_request(method, params)
        except ConnectionClosedError:
            raise self._gone() from None

    async def notify(self, method: str, params: JsonDict | None = None) -> None:
        if self._closed or self._connection is None:
            raise McpConnectionClosed(self._close_reason or "the server is not running")
        try:
            await self._connection.send_notification(method, params)
        except ConnectionClosedError:
            raise self._gone() from None

    async def list_tools(
        self, *, timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    ) -> list[McpToolInfo]:
        """Every tool the server offers, following ``nextCursor`` through all pages."""
        tools: list[McpToolInfo] = []
        cursor: str | None = None
        seen_cursors: set[str] = set()
        try:
            with anyio.fail_after(timeout_s):
                for _ in range(MAX_TOOL_PAGES):
                    result = await self.request(
                        "tools/list", {"cursor": cursor} if cursor else {}, timeout_s=None
                    )
                    if not isinstance(result, Mapping):
                        raise McpError("the tools/list result is not an object")
                    tools.extend(self._parse_tools(result.get("tools")))
                    cursor = result.get("nextCursor")
                    if not isinstance(cursor, str) or not cursor:
                        return tools
                    if cursor in seen_cursors:
                        self._log.warning("MCP server %s repeats a tools/list cursor", self.name)
                        return tools
                    seen_cursors.add(cursor)
        except TimeoutError:
            raise McpTimeoutError(f"tools/list did not finish within {timeout_s:g} s") from None
        self._log.warning("MCP server %s: stopped after %d tool pages", self.name, MAX_TOOL_PAGES)
        return tools

    def _parse_tools(self, page: Any) -> list[McpToolInfo]:
        if not isinstance(page, list):
            raise McpError("the tools/list result has no tools array")
        parsed = []
        for raw in page:
            info = McpToolInfo.from_wire(raw)
            if info is None:
                self._log.warning("MCP server %s lists a tool without a name", self.name)
            else:
                parsed.append(info)
        return parsed

    async def call_tool(
        self, name: str, arguments: JsonDict, *, timeout_s: float | None = None
    ) -> JsonDict:
        """``tools/call``; returns the raw result (``content``, ``isError``, ...)."""
        result = await self.request(
            "tools/call",
            telemetry.with_trace_meta({"name": name, "arguments": arguments}),
            timeout_s=timeout_s,
        )
        if not isinstance(result, dict):
            raise McpError("the tools/call result is not an object")
        return result

    # ------------------------------------------------------------------ I/O

    async def _send_cancelled(self, request_id: int, reason: str) -> None:
        """Best-effort ``notifications/cancelled``; never raises, never waits long."""
        with anyio.move_on_after(CANCEL_NOTICE_TIMEOUT_S), contextlib.suppress(McpError):
            await self.notify(
                "notifications/cancelled", {"requestId": request_id, "reason": reason}
            )

    def _on_invalid_output(self, error: RpcError) -> None:
        reason = error.data.get("reason") if isinstance(error.data, dict) else None
        self._log.warning(
            "MCP server %s wrote something that is no message (%s); ignored",
            self.name,
            reason or error.message,
        )

    async def _run_io(self, server: ServerProcess, connection: Connection) -> None:
        try:
            with self._io_scope:
                async with anyio.create_task_group() as group:
                    stderr_done = anyio.Event()

                    async def read_stderr() -> None:
                        try:
                            await server.read_stderr()
                        finally:
                            stderr_done.set()

                    group.start_soon(read_stderr)
                    try:
                        await connection.serve()
                    finally:
                        self._served.set()
                        self._gone()
                    # Let stderr drain (its last lines explain an exit), but not forever:
                    # a detached child may keep it open.
                    with anyio.move_on_after(DEFAULT_GRACE_S):
                        await stderr_done.wait()
                    group.cancel_scope.cancel()
        finally:
            self._io_done.set()
