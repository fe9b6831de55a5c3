"""A remote agent the checker starts itself: ``--url http://127.0.0.1:{port}/acp -- SERVER_CMD``.

Each agent a scenario needs is then a fresh server process on a free port, started with the
same sandbox and environment as a stdio agent (fresh HOME, the scripted model's URL), so the
prompt-turn requirements run over the remote transport with the checker's scripted model. The
process's stdout and stderr are drained into the run's stderr record (a full pipe would stall
the server); the protocol itself travels only over HTTP or WebSocket.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, TaskGroup

from .process import AgentProcess
from .recorder import Recorder

PORT_PLACEHOLDER = "{port}"


class ServerNotListening(Exception):
    """The server exited, or did not listen on its port within the bound."""


def free_port() -> int:
    """A port nothing listens on now (the server binds it moments later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def with_port(values: Sequence[str], port: int) -> list[str]:
    return [value.replace(PORT_PLACEHOLDER, str(port)) for value in values]


async def start_server(
    argv: Sequence[str],
    *,
    port: int,
    env: Mapping[str, str],
    cwd: Path,
    tg: TaskGroup,
    recorder: Recorder,
    bound: float,
) -> AgentProcess:
    """Start the server with ``{port}`` filled in and return once it accepts connections."""
    process = await AgentProcess.start(with_port(argv, port), env=env, cwd=cwd)
    for stream in (process.process.stdout, process.process.stderr):
        if stream is not None:
            tg.start_soon(_drain, stream, recorder)
    try:
        with anyio.fail_after(bound):
            await _until_listening(process, port)
    except TimeoutError as exc:
        raise ServerNotListening(
            f"the server did not listen on port {port} within {bound:g} s"
        ) from exc
    return process


async def _until_listening(process: AgentProcess, port: int) -> None:
    while True:
        try:
            connection = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            if process.returncode is not None:
                raise ServerNotListening(
                    f"the server exited with {process.returncode} before listening"
                ) from None
            # Polling is the only portable readiness signal for an arbitrary server command.
            await anyio.sleep(0.05)
        else:
            await connection.aclose()
            return


async def _drain(stream: ByteReceiveStream, recorder: Recorder) -> None:
    while True:
        try:
            chunk = await stream.receive(64 * 1024)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        recorder.stderr.write(chunk)
