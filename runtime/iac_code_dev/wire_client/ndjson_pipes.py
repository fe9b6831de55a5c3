"""The wire client over NDJSON byte streams: an in-memory pipe or a real agent subprocess.

:class:`NdjsonPipe` writes one JSON object per line and splits what it reads into lines;
every line is kept verbatim in :attr:`NdjsonPipe.raw_lines` (so a test can check that stdout
carries nothing but frames), and a line that is not JSON (nor strict UTF-8) reaches the client
as ``{"__unparsable__": text}``. :func:`open_agent_process` starts ``iac-code acp`` (or any
command) with pipes and stops it afterwards, however the block ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal as signals
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc

from .rpc_client import TIMEOUT, Handler, WireClient

__all__ = [
    "AgentProcess",
    "NdjsonPipe",
    "agent_command",
    "encode",
    "open_agent_process",
    "open_pipe_client",
]

SendBytes = Callable[[bytes], Awaitable[None]]
ReceiveBytes = Callable[[], Awaitable[bytes]]


def encode(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode(line: bytes) -> Any:
    """One line as JSON: strict UTF-8, no ``NaN``/``Infinity`` (``json.loads`` would guess
    UTF-16 and accept both); anything else comes out as ``{"__unparsable__": text}``."""
    try:
        return json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return {"__unparsable__": line.decode("utf-8", "replace")}


class NdjsonPipe:
    """One NDJSON connection over two byte streams."""

    def __init__(self, send_bytes: SendBytes, receive_bytes: ReceiveBytes) -> None:
        self._send_bytes = send_bytes
        self._receive_bytes = receive_bytes
        self._lock = anyio.Lock()
        self.raw_lines: list[bytes] = []  # every line the agent wrote, verbatim

    async def send(self, message: Any, stream: str | None = None) -> None:
        del stream  # one pipe carries every session
        await self.send_bytes(encode(message))

    async def send_together(self, messages: Sequence[Any]) -> None:
        """Several messages in one write (the reader gets them in one chunk)."""
        await self.send_bytes(b"".join(encode(message) for message in messages))

    async def send_bytes(self, data: bytes) -> None:
        """Write bytes as they are (partial lines, several frames at once, bad JSON)."""
        async with self._lock:
            await self._send_bytes(data)

    async def read_into(self, client: WireClient) -> None:
        """Hand every line to ``client`` until the stream ends, then end the client."""
        buffer = b""
        try:
            while True:
                try:
                    chunk = await self._receive_bytes()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self.raw_lines.append(line + b"\n")
                    client.deliver(decode(line))
            if buffer:
                self.raw_lines.append(buffer)
                client.deliver(decode(buffer))
        finally:
            client.end()


@contextlib.asynccontextmanager
async def open_pipe_client(
    send_bytes: SendBytes,
    receive_bytes: ReceiveBytes,
    *,
    handlers: Mapping[str, Handler] | None = None,
    refuse_unhandled: bool = True,
    wait_s: float = TIMEOUT,
) -> AsyncIterator[WireClient]:
    """A client reading ``receive_bytes`` in a task for the duration of the block (its
    ``transport`` is the :class:`NdjsonPipe`)."""
    pipe = NdjsonPipe(send_bytes, receive_bytes)
    client = WireClient(
        pipe.send,
        handlers=handlers,
        refuse_unhandled=refuse_unhandled,
        wait_s=wait_s,
        transport=pipe,
    )
    async with anyio.create_task_group() as group:
        client.attach(group)
        group.start_soon(pipe.read_into, client)
        try:
            yield client
        finally:
            group.cancel_scope.cancel()


def agent_command(*args: str) -> list[str]:
    """``iac-code acp`` of this environment."""
    return [sys.executable, "-m", "iac_code.cli", "acp", *args]


@dataclass
class AgentProcess:
    """A running agent subprocess and the client speaking to it."""

    process: anyio.abc.Process
    client: WireClient
    pipe: NdjsonPipe
    stderr_path: Path | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def signal(self, signum: signals.Signals = signals.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signum)

    def kill(self, signum: signals.Signals = signals.SIGKILL) -> None:
        self.signal(signum)

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self.process.stdin.aclose()

    async def wait_exit(self, wait_s: float = TIMEOUT) -> int:
        with anyio.fail_after(wait_s):
            return await self.process.wait()

    @property
    def stderr_text(self) -> str:
        if self.stderr_path is None:
            return ""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


@contextlib.asynccontextmanager
async def open_agent_process(
    command: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stderr_path: Path | None = None,
    handlers: Mapping[str, Handler] | None = None,
    refuse_unhandled: bool = True,
    wait_s: float = TIMEOUT,
    kill_at_exit: bool = False,
) -> AsyncIterator[AgentProcess]:
    """Start ``command`` (default: ``iac-code acp``) with pipes; stop it when the block ends.

    Stopping closes stdin and gives the agent 3 s to exit before SIGKILL, or kills it at once
    with ``kill_at_exit``. Its stderr goes to ``stderr_path`` (discarded without one).
    """
    stderr: IO[bytes] | int = subprocess.DEVNULL
    if stderr_path is not None:
        stderr = stderr_path.open("wb")
    try:
        process = await anyio.open_process(
            list(command or agent_command()),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=dict(env if env is not None else os.environ),
            cwd=cwd,
        )
    finally:
        if not isinstance(stderr, int):
            stderr.close()  # the child has its own copy
    assert process.stdin is not None and process.stdout is not None
    try:
        async with open_pipe_client(
            process.stdin.send,
            process.stdout.receive,
            handlers=handlers,
            refuse_unhandled=refuse_unhandled,
            wait_s=wait_s,
        ) as client:
            yield AgentProcess(process, client, client.transport, stderr_path)
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None and not kill_at_exit:
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await process.stdin.aclose()
                with anyio.move_on_after(3):
                    await process.wait()
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
            await process.aclose()
