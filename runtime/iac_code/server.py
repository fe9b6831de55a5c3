"""The full ``iac-code acp`` runtime: the agent behind the router on a stdio connection.

Imported by the start-up fast path in a background thread, so importing this module is
where the heavy imports (anyio, pydantic, the models ``initialize`` and ``session/new``
need) happen; ``anthropic`` is still left for the first prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

# Warm the models the first requests use, so the first session/new is fast too.
from acp_bindings.models import (  # noqa: F401
    InitializeRequest,
    NewSessionRequest,
    PromptRequest,
)

from iac_code.agent.server import IacAgent
from iac_code.logs import configure_logging
from iac_code.router import Router
from iac_code.rpc.stdio import serve_stdio

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from iac_code.rpc.connection import Connection
    from iac_code.settings import Settings


def raise_open_file_limit() -> None:
    """Each active session holds its lock file open; allow many sessions per process."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = hard if hard != resource.RLIM_INFINITY else 65_536
        if soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, 65_536), hard))
    except (ImportError, ValueError, OSError):
        pass  # not fatal: the default limit still allows hundreds of sessions


def run_stdio_server(
    settings: Settings, *, prefix: bytes = b"", initialize_params: dict[str, Any] | None = None
) -> int:
    configure_logging(settings.log_level, settings.log_file)
    raise_open_file_limit()
    agents: list[IacAgent] = []
    background: list[TaskGroup] = []

    def make_handler(connection: Connection) -> Router:
        agent = IacAgent(settings, connection, background=background[0])
        if initialize_params is not None:
            agent.remember_fast_initialize(initialize_params)
        agents.append(agent)
        return Router(agent)

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
                on_shutdown=on_shutdown,
            )
            group.cancel_scope.cancel()  # on_shutdown has closed every session by now

    anyio.run(serve)
    return 0
