"""The process of one stdio MCP server: how it is started, what its stderr says, how it stops.

The server runs in its own session (so everything it forks can be stopped with it),
in the session's cwd, with the environment it is given. Its stdin and stdout carry
JSON-RPC (see :mod:`iac_code.mcp.client`); its stderr goes to the agent's log, never to our
stdout, which carries ACP. Writes to its stdin are bounded in time: a server that stops
reading must not hold up the session.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import anyio.abc

from iac_code.rpc.framing import LineFramer, OversizedLine
from iac_code.tools.process_group import ProcessTree, spawn_shielded

__all__ = ["BoundedWrites", "ServerProcess"]

STDERR_TAIL_LINES = 20
STDERR_MAX_LINE_BYTES = 64 * 1024
STDERR_LOG_CHARS = 2_000


class BoundedWrites(anyio.abc.ByteSendStream):
    """The server's stdin, where a write that takes longer than ``timeout_s`` fails.

    The connection's writer treats a failed write as the end of the output; :attr:`failure`
    says why it ended, for the errors the callers get.
    """

    def __init__(self, stream: anyio.abc.ByteSendStream, timeout_s: float) -> None:
        self._stream = stream
        self._timeout_s = timeout_s
        self.failure: str | None = None

    async def send(self, item: bytes) -> None:
        try:
            with anyio.fail_after(self._timeout_s):
                await self._stream.send(item)
        except TimeoutError:
            # Part of the line may be written: the stream cannot be trusted any more.
            self.failure = "the server stopped reading its input"
            raise anyio.BrokenResourceError from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self.failure = "the server closed its input"
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()


class ServerProcess:
    """A started server process; :meth:`stop` ends it and everything it forked."""

    def __init__(self, process: anyio.abc.Process, name: str, logger: logging.Logger) -> None:
        self.process = process
        self._name = name
        self._log = logger
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        name: str,
        logger: logging.Logger,
    ) -> ServerProcess:
        """Start ``argv`` in a new session; ``OSError`` when it cannot be started.

        The spawn is shielded from cancellation: the server runs from the fork on, but the
        caller gets the process object only when this returns (asyncio connects the pipes
        in between). A cancel landing there would leave no one holding the process to stop
        it; shielded, the cancel lands at the caller's next await, whose cleanup stops the
        server and everything it started (``McpStdioClient.start``).
        """
        process = await spawn_shielded(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stderr=subprocess.PIPE
        )
        return cls(process, name, logger)

    @property
    def pid(self) -> int:
        """The server's pid, which is also its session and process group id."""
        return self.process.pid

    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr (for error messages)."""
        return list(self._stderr_tail)

    async def read_stderr(self) -> None:
        """Log every stderr line until the server closes it."""
        stream = self.process.stderr
        assert stream is not None
        framer = LineFramer(STDERR_MAX_LINE_BYTES)
        try:
            async for chunk in stream:
                for line in framer.feed(chunk):
                    self._log_stderr(line)
            for line in framer.close():
                self._log_stderr(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass

    def _log_stderr(self, line: bytes | OversizedLine) -> None:
        if isinstance(line, OversizedLine):
            text = f"[a line over {line.limit} bytes was dropped]"
        else:
            text = line.decode("utf-8", errors="replace")[:STDERR_LOG_CHARS]
        self._stderr_tail.append(text)
        self._log.info("MCP server %s stderr: %s", self._name, text)

    async def stop(self, grace_s: float) -> None:
        """Wait up to ``grace_s`` for the server to exit (its stdin is closed by now), then
        SIGTERM every process it started and SIGKILL them after another ``grace_s``."""
        with anyio.move_on_after(grace_s):
            await self.process.wait()
        tree = ProcessTree(self.pid)
        await tree.terminate(self.process, grace_s)
        await tree.wait_gone(grace_s)

    async def release(self, grace_s: float) -> None:
        """Close the pipes and reap the process (bounded)."""
        with anyio.move_on_after(grace_s), contextlib.suppress(Exception):
            await self.process.aclose()
