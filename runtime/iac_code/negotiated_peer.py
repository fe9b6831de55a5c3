"""The agent's :class:`~iac_code.rpc.peer.Peer` on a stdio connection: whichever version
``initialize`` agreed on.

While the connection speaks v1 (always until the first v2 ``initialize``) every message
goes straight to the connection: a v1 session's updates never pass through, and never
import, the v2 package. Once v2 is agreed the messages go through the
:class:`~iac_code.v2.rewriter.V2Rewriter`, built on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iac_code.rpc.connection import Connection
    from iac_code.rpc.peer import Peer
    from iac_code.v2.rewriter import V2Rewriter

__all__ = ["NegotiatedPeer"]


class NegotiatedPeer:
    """Sends through ``connection`` in the shape of the agreed protocol :attr:`version`."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._version = 1
        self._current: Peer = connection
        self._v2: V2Rewriter | None = None

    @property
    def version(self) -> int:
        return self._version

    @version.setter
    def version(self, value: int) -> None:
        """The agreed version; from 2 on the connection also answers JSON-RPC batches."""
        self._version = value
        self.connection.accepts_batches = value >= 2
        self._current = self.v2_rewriter() if value >= 2 else self.connection

    def v2_rewriter(self) -> V2Rewriter:
        """The v2 rewriter on this connection (the v2 handlers send through it as well)."""
        if self._v2 is None:
            from iac_code.v2.rewriter import V2Rewriter

            self._v2 = V2Rewriter(self.connection)
        return self._v2

    def call_before_writing(self, callback: Callable[[], None]) -> None:
        """Frames of both versions go through the one connection's writer."""
        self.connection.call_before_writing(callback)

    async def send_request(self, method: str, params: object = None) -> Any:
        return await self._current.send_request(method, params)

    async def send_notification(self, method: str, params: object = None) -> None:
        await self._current.send_notification(method, params)
