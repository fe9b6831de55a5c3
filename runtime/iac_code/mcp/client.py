"""A Model Context Protocol client for one server started as a local process (stdio).

The server runs in its own process group (so everything it forks can be stopped with it),
in the session's cwd, with the agent's environment minus its credentials (see
:mod:`iac_code.child_env`) plus the pairs the ACP client gave. We talk JSON-RPC 2.0 over its
stdin/stdout, one message per line, with our own id sequence; its stderr goes to the
agent's log (never to our stdout, which carries ACP).

Every wait is bounded: the ``initialize`` handshake, each request, writes to the server's
stdin, the cancellation notice and the shutdown ladder (close stdin → wait → SIGTERM the
group → SIGKILL the group). Requests the server sends us are answered: ``ping`` with an
empty result, everything else (sampling, roots, elicitation — none advertised) with -32601.

The reader tasks run in a task group the caller provides and that outlives the client
(the session's MCP supervisor, see :mod:`iac_code.mcp.manager`); :meth:`McpStdioClient.aclose`
must be called to stop the process.
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from iac_code import __version__
from iac_code.child_env import child_environment
from iac_code.mcp.config import StdioServerConfig
from iac_code.mcp.framing import DEFAULT_MAX_LINE_BYTES, DroppedLine, LineSplitter
from iac_code.tools.process_group import (
    _group_has_live_members,  # private there; reused so that one /proc scanner exists
    terminate_group,
)

JsonDict = dict[str, Any]

#: The revision we ask for; servers may answer with an older one they speak.
LATEST_PROTOCOL_VERSION = "2025-06-18"
#: Revisions whose tools/list and tools/call shapes we know (all compatible for tools).
KNOWN_PROTOCOL_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18"})
CLIENT_INFO = {"name": "iac-code", "version": __version__}

METHOD_NOT_FOUND = -32601

DEFAULT_START_TIMEOUT_S = 10.0
DEFAULT_REQUEST_TIMEOUT_S = 30.0
DEFAULT_GRACE_S = 2.0
# A server that does not read its stdin for this long is treated as broken.
WRITE_TIMEOUT_S = 10.0
# The cancellation notice is best effort: never hold up the cancelled caller for long.
CANCEL_NOTICE_TIMEOUT_S = 1.0
# tools/list pages followed before giving up (a server repeating cursors forever).
MAX_TOOL_PAGES = 100
_GROUP_POLL_S = 0.02
STDERR_TAIL_LINES = 20
STDERR_MAX_LINE_BYTES = 64 * 1024
STDERR_LOG_CHARS = 2_000


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


class _Pending:
    """An outbound request waiting for its response."""

    __slots__ = ("error", "event", "result")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.result: Any = None
        self.error: McpError | None = None

    def resolve(self, result: Any = None, error: McpError | None = None) -> None:
        if not self.event.is_set():
            self.result, self.error = result, error
            self.event.set()


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
        self._process: anyio.abc.Process | None = None
        self._write_lock = anyio.Lock()
        self._pending: dict[int, _Pending] = {}
        self._last_id = 0
        self._closed = False
        self._close_reason = "the server is not started"
        self._closing = False
        self._shutdown_done = anyio.Event()
        self._io_scope = anyio.CancelScope()
        self._io_done = anyio.Event()
        self._io_group: anyio.abc.TaskGroup | None = None
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
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
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    @property
    def is_open(self) -> bool:
        return self._process is not None and not self._closed

    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr (for error messages)."""
        return list(self._stderr_tail)

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
        be started, exits, or does not answer in time. ``task_group`` hosts the reader tasks
        and must outlive the client.
        """
        if self._process is not None:
            raise RuntimeError("an McpStdioClient can be started only once")
        argv = [self.config.command, *self.config.args]
        try:
            self._process = await anyio.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._cwd,
                env=self._environment(),
                start_new_session=True,
            )
        except OSError as exc:
            self._shutdown_done.set()
            raise McpStartError(
                f"could not start {self.config.command!r}: {exc.strerror or exc}"
            ) from exc
        self._closed = False
        self._close_reason = ""
        task_group.start_soon(self._run_io)
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
        process = self._process
        if process is None:
            return
        if self._closing:
            with anyio.move_on_after(3 * grace_s + 1):
                await self._shutdown_done.wait()
            return
        self._closing = True
        with anyio.CancelScope(shield=True):
            try:
                self._mark_closed("the connection to the server was closed")
                if process.stdin is not None:
                    with anyio.move_on_after(grace_s), contextlib.suppress(Exception):
                        await process.stdin.aclose()
                with anyio.move_on_after(grace_s):
                    await process.wait()
                await terminate_group(process, process.pid, grace_s)
                await self._wait_group_gone(process.pid, grace_s)
                # The readers end at EOF, after draining the last stderr lines; a process
                # that detached from the group may hold the pipes open, so do not wait long.
                with anyio.move_on_after(grace_s):
                    await self._io_done.wait()
                self._io_scope.cancel()
                with anyio.move_on_after(grace_s), contextlib.suppress(Exception):
                    await process.aclose()
            finally:
                self._shutdown_done.set()
        self._log.debug("MCP server %s stopped (exit code %s)", self.name, process.returncode)

    @staticmethod
    async def _wait_group_gone(pgid: int, limit_s: float) -> None:
        """After SIGKILL the leader is reaped, but other members die a moment later."""
        with anyio.move_on_after(limit_s):
            while True:  # nothing to wait on but /proc: poll briefly
                if not _group_has_live_members(pgid):
                    return
                await anyio.sleep(_GROUP_POLL_S)

    def _mark_closed(self, reason: str) -> None:
        """No more requests: fail the waiting ones with ``reason``."""
        if self._closed:
            return
        self._closed, self._close_reason = True, reason
        pending, self._pending = self._pending, {}
        for waiter in pending.values():
            waiter.resolve(error=McpConnectionClosed(reason))

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
        self._last_id += 1
        request_id = self._last_id
        waiter = _Pending()
        message: JsonDict = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._pending[request_id] = waiter
        try:
            await self._write(message)
            with anyio.fail_after(timeout_s):
                await waiter.event.wait()
        except TimeoutError:
            if cancellable:
                await self._send_cancelled(request_id, f"no answer within {timeout_s:g} s")
            raise McpTimeoutError(f"{method} got no answer within {timeout_s:g} s") from None
        except anyio.get_cancelled_exc_class():
            if cancellable and not waiter.event.is_set():
                with anyio.CancelScope(shield=True):
                    await self._send_cancelled(request_id, "the request was cancelled")
            raise
        finally:
            self._pending.pop(request_id, None)
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    async def notify(self, method: str, params: JsonDict | None = None) -> None:
        message: JsonDict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

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
            "tools/call", {"name": name, "arguments": arguments}, timeout_s=timeout_s
        )
        if not isinstance(result, dict):
            raise McpError("the tools/call result is not an object")
        return result

    # ------------------------------------------------------------------ I/O

    async def _write(self, message: JsonDict) -> None:
        if self._closed or self._process is None or self._process.stdin is None:
            raise McpConnectionClosed(self._close_reason or "the server is not running")
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        async with self._write_lock:
            try:
                with anyio.fail_after(WRITE_TIMEOUT_S):
                    await self._process.stdin.send(data)
            except TimeoutError:
                # Part of the line may be written: the stream cannot be trusted any more.
                self._mark_closed("the server stopped reading its input")
                raise McpConnectionClosed(self._close_reason) from None
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                self._mark_closed("the server closed its input")
                raise McpConnectionClosed(self._close_reason) from exc

    async def _send_cancelled(self, request_id: int, reason: str) -> None:
        """Best-effort ``notifications/cancelled``; never raises, never waits long."""
        with anyio.move_on_after(CANCEL_NOTICE_TIMEOUT_S), contextlib.suppress(McpError):
            await self.notify(
                "notifications/cancelled", {"requestId": request_id, "reason": reason}
            )

    async def _run_io(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None and process.stderr is not None
        try:
            with self._io_scope:
                async with anyio.create_task_group() as group:
                    self._io_group = group
                    stderr_done = anyio.Event()
                    group.start_soon(self._read_stderr, process.stderr, stderr_done)
                    await self._read_stdout(process.stdout)
                    # Let stderr drain (its last lines explain an exit), but not forever:
                    # a detached child may keep it open.
                    with anyio.move_on_after(DEFAULT_GRACE_S):
                        await stderr_done.wait()
                    group.cancel_scope.cancel()
        finally:
            self._io_group = None
            self._io_done.set()

    async def _read_stdout(self, stream: anyio.abc.ByteReceiveStream) -> None:
        splitter = LineSplitter(self._max_line_bytes)
        try:
            async for chunk in stream:
                for line in splitter.feed(chunk):
                    if isinstance(line, DroppedLine):
                        self._log.warning(
                            "MCP server %s sent a %d-byte line; dropped", self.name, line.size
                        )
                    elif line.strip():
                        await self._on_line(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            self._mark_closed("the server closed its output")

    async def _read_stderr(self, stream: anyio.abc.ByteReceiveStream, done: anyio.Event) -> None:
        splitter = LineSplitter(STDERR_MAX_LINE_BYTES)
        try:
            async for chunk in stream:
                for line in splitter.feed(chunk):
                    self._log_stderr(line)
            last = splitter.flush()
            if last is not None:
                self._log_stderr(last)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            done.set()

    def _log_stderr(self, line: bytes | DroppedLine) -> None:
        if isinstance(line, DroppedLine):
            text = f"[a {line.size}-byte line was dropped]"
        else:
            text = line.decode("utf-8", errors="replace")[:STDERR_LOG_CHARS]
        if text.strip():
            self._stderr_tail.append(text)
            self._log.info("MCP server %s stderr: %s", self.name, text)

    async def _on_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            shown = line[:200].decode("utf-8", errors="replace")
            self._log.warning("MCP server %s printed a non-JSON line: %s", self.name, shown)
            return
        for item in message if isinstance(message, list) else [message]:
            self._on_message(item)

    def _on_message(self, message: Any) -> None:
        if not isinstance(message, Mapping):
            self._log.warning("MCP server %s sent a message that is not an object", self.name)
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._answer_later(message["id"], method)
            else:
                self._on_notification(method, message.get("params"))
        elif "id" in message and ("result" in message or "error" in message):
            self._on_response(message)
        else:
            self._log.warning("MCP server %s sent an invalid message", self.name)

    def _on_response(self, message: Mapping[str, Any]) -> None:
        request_id = message.get("id")
        waiter = self._pending.get(request_id) if isinstance(request_id, int) else None
        if waiter is None:
            # Usually the late answer to a request we cancelled or gave up on.
            self._log.debug("MCP server %s answered unknown id %r", self.name, request_id)
            return
        error = message.get("error")
        if "error" in message:
            if isinstance(error, Mapping):
                code = error.get("code")
                text = error.get("message")
                waiter.resolve(
                    error=McpRequestError(
                        code if isinstance(code, int) else -32603,
                        text if isinstance(text, str) else "unknown error",
                        error.get("data"),
                    )
                )
            else:
                waiter.resolve(error=McpRequestError(-32603, "malformed error"))
        else:
            waiter.resolve(result=message.get("result"))

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "notifications/message" and isinstance(params, Mapping):
            self._log.info(
                "MCP server %s log (%s): %s", self.name, params.get("level"), params.get("data")
            )
        elif method == "notifications/tools/list_changed":
            # The tool set of a session is fixed once listed; a changed list shows next session.
            self._log.info("MCP server %s changed its tool list", self.name)
        else:
            self._log.debug("MCP server %s notification %s", self.name, method)

    def _answer_later(self, request_id: Any, method: str) -> None:
        """Answer a server request without holding up the reader."""
        if self._io_group is not None:
            self._io_group.start_soon(self._answer, request_id, method)

    async def _answer(self, request_id: Any, method: str) -> None:
        reply: JsonDict = {"jsonrpc": "2.0", "id": request_id}
        if method == "ping":
            reply["result"] = {}
        else:
            self._log.debug("MCP server %s asked for unsupported %s", self.name, method)
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
        with contextlib.suppress(McpError):
            await self._write(reply)
