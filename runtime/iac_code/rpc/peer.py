"""What the agent needs of the other end: a typing protocol, not a class to inherit.

:class:`~iac_code.rpc.connection.Connection` satisfies it, and so does every layer that
stands between the agent and its connection (the peer that follows the negotiated protocol
version, the v2 rewriter, test doubles), so none of them has to pretend to be a connection.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["Peer"]


class Peer(Protocol):
    """Sends requests and notifications to the client."""

    async def send_request(self, method: str, params: object = None) -> Any:
        """Call ``method`` on the client; its result, or the ``RpcError`` it answered."""
        ...

    async def send_notification(self, method: str, params: object = None) -> None:
        """Queue a notification for the client (no answer)."""
        ...
