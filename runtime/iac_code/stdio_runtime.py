"""The full ``iac-code acp`` runtime: the agent behind the router on a stdio connection.

Imported by the start-up fast path in a background thread, so importing this module is
where the heavy imports (anyio, pydantic, the models ``initialize`` and ``session/new``
need) happen; ``anthropic`` is loaded later, in the background once a session is open (see
``iac_code.llm.preload``).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

import anyio

from iac_code import telemetry
from iac_code.agent.acp_agent import IacAgent
from iac_code.llm.preload import GATE, IdleGate
from iac_code.logs import start_logging
from iac_code.router import build_models
from iac_code.rpc.stdio import serve_stdio
from iac_code.versioned_router import VersionedRouter, route_versions

# Build the validators of every implemented method's params and result now, while this
# module is imported in the background (see iac_code.prelude), so no first request pays it.
build_models(IacAgent)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from anyio.abc import TaskGroup

    from iac_code.prelude import FastSession
    from iac_code.rpc.connection import Connection
    from iac_code.rpc.context import RequestContext
    from iac_code.settings import Settings


def raise_open_file_limit() -> None:
    """MCP servers and commands hold pipes; allow many of them per process."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = hard if hard != resource.RLIM_INFINITY else 65_536
        if soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, 65_536), hard))
    except (ImportError, ValueError, OSError):
        pass  # not fatal: the default limit still allows hundreds of sessions


def warm_handler_modules() -> None:
    """Import every module a request may need later, now.

    The params models of most methods and the MCP client are imported on first use; an
    import opens files, so under descriptor exhaustion (many sessions with MCP servers) a
    method used for the first time would fail for a reason that has nothing to do with it.
    Runs in a daemon thread while the connection serves, so start-up does not wait for it.
    """
    from acp_bindings.methods import METHODS

    try:
        for spec in METHODS.values():
            if spec.side in ("agent", "protocol"):
                spec.params_model()
        import iac_code.mcp.manager  # noqa: F401
    except Exception:  # a missing optional model must never take the server down
        logging.getLogger(__name__).debug("warming handler modules failed", exc_info=True)


def warm_database_store(settings: Settings) -> None:
    """Connect a database store (``--store postgresql://…``) while the connection starts.

    The driver's import and the first connection take a few hundred milliseconds; done here,
    in a daemon thread, the first request that reads the store does not wait for them. The
    agent gets the same store object (:func:`open_store` keeps one per URL). An unreachable
    database is left to that first request, which answers it with a clear error.
    """
    if not settings.store_url:
        return
    from iac_code.store.open_store import open_store

    try:
        connect = getattr(open_store(settings), "connect", None)
        if connect is not None:
            connect()
    except Exception:
        logging.getLogger(__name__).debug(
            "connecting the session store early failed", exc_info=True
        )


class _CountedHandler:
    """The connection's handler: tells the preload gate while a request is handled, and
    starts the model SDK preload once the client has opened a session.

    Only a session can lead to a prompt, so a client that never opens one (a probe that asks
    ``initialize`` and leaves, a test kit checking the handshake) never pays the seconds of
    CPU the SDK costs. An editor opens its session right after ``initialize``, and the
    preload still has the seconds its user takes to type.
    """

    def __init__(self, inner: VersionedRouter, gate: IdleGate, agent: IacAgent) -> None:
        self._inner = inner
        self._gate = gate
        self._agent = agent
        self._preload_started = False
        self.start_preload_once_a_session_is_open()  # sessions the fast path answered

    async def handle_request(self, ctx: RequestContext, method: str, params: object) -> object:
        self._gate.enter()
        try:
            return await self._inner.handle_request(ctx, method, params)
        finally:
            self._gate.leave()
            self.start_preload_once_a_session_is_open()

    async def handle_notification(self, method: str, params: object) -> None:
        await self._inner.handle_notification(method, params)

    def start_preload_once_a_session_is_open(self) -> None:
        if not self._preload_started and self._agent.sessions:
            self._preload_started = True
            self._agent.models.start_preload()


def run_stdio_server(
    settings: Settings,
    *,
    prefix: bytes = b"",
    initialize_params: dict[str, Any] | None = None,
    fast_sessions: Sequence[FastSession] = (),
) -> int:
    start_logging(settings)
    raise_open_file_limit()
    threading.Thread(target=warm_handler_modules, name="iac-code-warm", daemon=True).start()
    threading.Thread(
        target=warm_database_store, args=(settings,), name="iac-code-warm-store", daemon=True
    ).start()
    agents: list[IacAgent] = []
    background: list[TaskGroup] = []

    def make_handler(connection: Connection) -> _CountedHandler:
        # The agent sends through a peer that speaks whichever version initialize agreed on.
        agent, router = route_versions(
            connection, lambda peer: IacAgent(settings, peer, background=background[0])
        )
        if initialize_params is not None:
            router.adopt_fast_initialize(initialize_params)
        for fast in fast_sessions:  # answered by the fast path: create and open them now
            agent.adopt_fast_session(fast.session_id, fast.cwd)
            background[0].start_soon(agent.announce_commands, fast.session_id)
        agents.append(agent)
        # The model SDK loads while the agent waits for the client, once a session is open,
        # pausing whenever a request is being handled.
        return _CountedHandler(router, GATE, agent)

    async def on_shutdown() -> None:
        for agent in agents:
            await agent.shutdown()

    async def serve() -> None:
        # A task group that outlives single requests: the sessions' MCP servers run in it.
        async with anyio.create_task_group() as group:
            background.append(group)
            await serve_stdio(
                make_handler,
                prefix=prefix,
                max_line_bytes=settings.max_line_bytes,
                max_pending_output_bytes=settings.max_output_backlog_bytes,
                on_shutdown=on_shutdown,
            )
            group.cancel_scope.cancel()  # on_shutdown has closed every session by now

    try:
        anyio.run(serve)
    finally:
        telemetry.shutdown()  # flush spans and metrics not exported yet
    return 0
