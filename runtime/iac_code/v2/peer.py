"""The agent's outbound side on a connection that may have negotiated v2.

The agent sends v1 shapes. :class:`VersionedPeer` stands where the agent expects its
connection and, once v2 is negotiated, rewrites each outbound message into v2 before it
reaches the wire. While the connection speaks v1 every call passes through untouched, so the
v1 path costs one attribute check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_bindings.errors import MethodNotFoundError

from iac_code.v2 import translate

if TYPE_CHECKING:
    from iac_code.rpc.connection import Connection

#: Client methods of v1 that v2 removed. The agent only calls them when the client
#: advertised fs or terminal support, which a v2 client cannot; refusing here keeps a
#: v2 client from ever receiving one.
_V1_ONLY_CLIENT_METHODS = frozenset(
    {
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
        "terminal/output",
        "terminal/release",
        "terminal/wait_for_exit",
        "terminal/kill",
    }
)


class VersionedPeer:
    """Forwards to ``connection``; translates to v2 once :attr:`version` is 2."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.version = 1

    async def send_notification(self, method: str, params: object = None) -> None:
        if self.version >= 2 and method == "session/update" and isinstance(params, dict):
            update = translate.update(params["update"])
            if update is None:
                return
            params = {**params, "update": update}
        await self.connection.send_notification(method, params)

    async def send_request(self, method: str, params: object = None) -> Any:
        if self.version >= 2:
            if method in _V1_ONLY_CLIENT_METHODS:
                raise MethodNotFoundError(data={"method": method})
            if method == "session/request_permission" and isinstance(params, dict):
                params = translate.permission_request(params)
        return await self.connection.send_request(method, params)

    def __getattr__(self, name: str) -> Any:
        # Anything else the agent uses on its connection behaves exactly as before.
        return getattr(self.connection, name)
