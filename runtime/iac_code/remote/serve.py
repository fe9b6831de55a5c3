"""``iac-code acp --transport http``: the agent behind the remote transport, on Hypercorn.

Hypercorn speaks HTTP/1.1, HTTP/2 (cleartext prior knowledge and h2c upgrade) and WebSocket,
and runs on asyncio, which anyio (the runtime's concurrency layer) drives as well.

Start-up refuses a non-loopback host without a token. SIGTERM/SIGINT drain: ``/readyz`` turns
503, new connections are refused (503), running turns may finish for ``--drain-timeout``
seconds, then every connection closes gracefully (what still runs is cancelled, sessions are
flushed and their locks or leases released, SSE streams end, WebSockets close with 1001)
before Hypercorn stops listening and the process exits 0.
"""

from __future__ import annotations

import logging
import signal
import socket
import sys
from typing import TYPE_CHECKING

import anyio

from iac_code.remote.options import RemoteOptions, is_loopback_host

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Awaitable, Callable
    from pathlib import Path

    from anyio.abc import TaskGroup

    from iac_code.llm.contract import ModelRequest, StreamEvent
    from iac_code.rpc.connection import Connection, RequestHandler
    from iac_code.settings import Settings

__all__ = ["AgentHandlerFactory", "agent_handler_factory", "check_startup", "run_http_server"]

log = logging.getLogger("iac_code.remote")


def check_startup(options: RemoteOptions) -> str | None:
    """Why the server must not start with these options, or None."""
    if not is_loopback_host(options.host) and not (options.token or options.authenticator):
        return (
            f"refusing to listen on {options.host} without a token: set IACCODE_ACP_HTTP_TOKEN"
            " (clients send it as 'Authorization: Bearer <token>') or use a loopback --host"
        )
    return None


def agent_handler_factory(
    settings: Settings, *, owners: bool = False, workspace_root: Path | None = None
) -> AgentHandlerFactory:
    """The same agent and router the stdio transport builds, once per remote connection.

    With ``owners`` (a server with named principals) or a workspace root, each agent sees
    the store through :class:`OwnedStore` for its connection's principal.
    """
    return AgentHandlerFactory(settings, owners=owners, workspace_root=workspace_root)


class AgentHandlerFactory:
    """Builds an :class:`IacAgent` behind a :class:`Router` for each new connection.

    ``aclose`` (called when the application stops) closes the model client they share.
    """

    def __init__(
        self, settings: Settings, *, owners: bool = False, workspace_root: Path | None = None
    ) -> None:
        self._settings = settings
        self._owners = owners
        self._workspace_root = workspace_root
        self._shared = _SharedModelClient(settings) if _usable_env_key(settings) else None

    def __call__(
        self, connection: Connection, background: TaskGroup
    ) -> tuple[RequestHandler, Callable[[], Awaitable[None]]]:
        from iac_code.agent.acp_agent import IacAgent
        from iac_code.router import Router

        store = None
        if self._owners or self._workspace_root is not None:
            from iac_code.remote.owned_store import OwnedStore
            from iac_code.remote.principals import CURRENT_PRINCIPAL
            from iac_code.store.open_store import open_store

            principal = CURRENT_PRINCIPAL.get()
            store = OwnedStore(open_store(self._settings), principal, self._workspace_root)
        agent = IacAgent(
            self._settings,
            connection,
            store,
            background=background,
            model_client=self._shared,
        )
        return Router(agent), agent.shutdown

    async def aclose(self) -> None:
        if self._shared is not None:
            await self._shared.aclose_shared()


def _usable_env_key(settings: Settings) -> bool:
    """An environment key that passes the credential check. Without one no client is shared:
    each connection's agent looks the key up itself (the saved one), and says why an
    unusable key is refused, as over stdio."""
    from iac_code.credentials import CredentialError, resolve_api_key

    if not settings.api_key:
        return False
    try:
        return bool(resolve_api_key(settings))
    except CredentialError:
        return False


class _SharedModelClient:
    """One model client for every connection of the server.

    Each connection's agent would otherwise build its own SDK client (an HTTP pool and a
    TLS context each) on its first prompt. This wrapper has no ``aclose``, so a connection
    that shuts down leaves the client to the others. Without an API key none is shared,
    and the agents answer prompts with "auth required" as over stdio.
    """

    def __init__(self, settings: Settings) -> None:
        from iac_code.llm.anthropic_client import AnthropicModelClient

        self._client = AnthropicModelClient(api_key=settings.api_key, base_url=settings.base_url)

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        return self._client.stream(request)

    async def aclose_shared(self) -> None:
        """Close the client for good (named so that agents never call it)."""
        await self._client.aclose()


def _warm_model_client_import() -> None:
    """Import ``anthropic`` in the background now: done lazily on the first prompt, the
    import would hold the event loop (every connection) for a second or more."""
    import threading

    def work() -> None:
        import iac_code.llm.anthropic_client  # noqa: F401  (the import is the work)

    threading.Thread(target=work, name="iac-code-warm-import", daemon=True).start()


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


def run_http_server(settings: Settings, options: RemoteOptions) -> int:
    problem = check_startup(options)
    if problem is not None:
        print(f"iac-code: {problem}", file=sys.stderr)
        return 2
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    from iac_code.logs import start_logging
    from iac_code.remote.app import build_app
    from iac_code.remote.health import Readiness, postgres_probe
    from iac_code.remote.ws_batches import enable_batched_sends
    from iac_code.remote.ws_compression import decline_compression
    from iac_code.stdio_runtime import raise_open_file_limit

    start_logging(settings)
    raise_open_file_limit()
    _warm_model_client_import()
    try:
        sock = _listening_socket(options.host, options.port)
    except OSError as exc:
        print(f"iac-code: cannot listen on {options.host}:{options.port}: {exc}", file=sys.stderr)
        return 2
    factory = agent_handler_factory(
        settings,
        owners=options.authenticator is not None,
        workspace_root=options.workspace_root,
    )
    readiness = Readiness(postgres_probe(settings.store_url) if settings.store_url else None)
    app, registry = build_app(factory, options, readiness)
    host, port = sock.getsockname()[:2]
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]  # Hypercorn owns (and closes) the descriptor
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.websocket_max_message_size = options.limits.max_body_bytes
    decline_compression(not options.websocket_compression)
    enable_batched_sends()
    config.graceful_timeout = 5.0
    shown = f"[{host}]" if ":" in host else host
    # One line on stderr that scripts (tests, bench) wait for; stdout is not used.
    print(f"iac-code: serving ACP on http://{shown}:{port}/acp", file=sys.stderr, flush=True)

    async def shutdown_trigger() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                log.info("received %s; draining", signal.Signals(signum).name)
                break
        readiness.draining = True  # /readyz answers 503: the balancer sends no new work
        await registry.drain(options.limits.drain_timeout_seconds)

    async def main() -> None:
        await serve(app, config, shutdown_trigger=shutdown_trigger)  # type: ignore[arg-type]

    try:
        anyio.run(main)
    finally:
        from iac_code import telemetry

        telemetry.shutdown()  # flush spans and metrics not exported yet
    return 0
