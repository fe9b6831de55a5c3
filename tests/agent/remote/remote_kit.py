"""Test kit for the remote transport: a real Hypercorn server on 127.0.0.1 in the test's event
loop, and the shared wire client (:mod:`iac_code_dev.wire_client`) over HTTP/SSE or WebSocket,
speaking the transport the way the official SDK clients do (answers routed by id, agent
requests answered on the stream they came on).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from hypercorn.asyncio import serve
from hypercorn.config import Config
from iac_code.remote.app import build_app
from iac_code.remote.options import RemoteLimits, RemoteOptions
from iac_code.remote.registry import ConnectionRegistry
from iac_code.remote.remote_connection import HandlerFactory
from iac_code.remote.serve import agent_handler_factory
from iac_code.remote.ws_batches import enable_batched_sends
from iac_code.settings import Settings
from iac_code_dev.wire_client import WireClient
from iac_code_dev.wire_client.remote_transports import open_http_client, open_ws_client

TIMEOUT = 60.0
CAPABILITIES = {"fs": {}, "terminal": False}
INIT = {"protocolVersion": 1, "clientCapabilities": CAPABILITIES}


def agent_settings(home: Path, llm_url: str) -> Settings:
    return Settings(home=home, api_key="test-key", base_url=llm_url, retry_base_delay=0.01)


@dataclass
class RunningServer:
    url: str
    registry: ConnectionRegistry

    @property
    def ws_url(self) -> str:
        return "ws" + self.url.removeprefix("http")


@asynccontextmanager
async def running_server(
    make_handler: HandlerFactory, options: RemoteOptions | None = None
) -> AsyncIterator[RunningServer]:
    """Hypercorn serving the app on an ephemeral loopback port, stopped on exit."""
    options = options or RemoteOptions()
    app, registry = build_app(make_handler, options)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]  # Hypercorn owns (and closes) the descriptor
    config.accesslog = None
    config.graceful_timeout = 1.0
    config.websocket_max_message_size = options.limits.max_body_bytes
    enable_batched_sends()  # as `iac-code acp --transport http` does
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_serve, app, config, stop)
        # The socket listens already: requests queue until Hypercorn accepts them.
        url = f"http://127.0.0.1:{port}/acp"
        try:
            yield RunningServer(url, registry)
        finally:
            stop.set()


async def _serve(app: Any, config: Config, stop: anyio.Event) -> None:
    await serve(app, config, shutdown_trigger=stop.wait)


@asynccontextmanager
async def agent_server(
    home: Path, llm_url: str, limits: RemoteLimits | None = None, **options: Any
) -> AsyncIterator[RunningServer]:
    remote = RemoteOptions(limits=limits or RemoteLimits(), **options)
    async with running_server(agent_handler_factory(agent_settings(home, llm_url)), remote) as s:
        yield s


# ---------------------------------------------------------------------- clients


def http_client(
    url: str, *, open_session_streams: bool = True, **headers: str
) -> AbstractAsyncContextManager[WireClient]:
    """The shared wire client over Streamable HTTP (``client.transport``: its streams)."""
    return open_http_client(
        url,
        headers=headers,
        wait_s=TIMEOUT,
        capabilities=CAPABILITIES,
        open_session_streams=open_session_streams,
    )


def ws_client(ws_url: str, **headers: str) -> AbstractAsyncContextManager[WireClient]:
    """The shared wire client over one WebSocket (``client.transport.socket``)."""
    return open_ws_client(ws_url, headers=headers, wait_s=TIMEOUT, capabilities=CAPABILITIES)


async def announced_url(stderr: anyio.abc.ByteReceiveStream) -> str:
    """The URL an `iac-code acp --transport http` process announces on stderr."""
    seen = b""
    with anyio.fail_after(TIMEOUT):
        while b"/acp" not in seen:
            seen += await stderr.receive()
    line = next(line for line in seen.decode().splitlines() if "serving ACP on" in line)
    return line.rsplit(" ", 1)[1]
