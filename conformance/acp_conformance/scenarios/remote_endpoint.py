"""The endpoint a remote-transport check probes: the ``--url`` given, or a server the checker
starts for that check alone (``--url ...{port}... -- CMD``)."""

from __future__ import annotations

from ..harness.remote import RemoteConnection
from ..harness.remote_http import RemoteTarget
from .check_context import CheckContext


async def endpoint(ctx: CheckContext) -> RemoteTarget:
    """The endpoint to probe: the given one, or (when the checker serves the agent itself) a
    server started for this check alone."""
    target = ctx.config.remote
    assert target is not None  # the scope gate makes http.*/ws.* not applicable otherwise
    if ctx.config.argv:
        run = await ctx.spawn(initialize=False, for_this_check=True)
        assert isinstance(run.conn, RemoteConnection)
        return run.conn.target
    return target
