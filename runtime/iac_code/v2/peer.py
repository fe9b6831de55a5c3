"""The agent's outbound side on a connection that may have negotiated v2.

The agent sends v1 shapes. :class:`VersionedPeer` stands where the agent expects its
connection and, once v2 is negotiated, rewrites each outbound message into v2 before it
reaches the wire. While the connection speaks v1 every call passes through untouched, so the
v1 path costs one attribute check.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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
        self._version = 1
        #: Sessions being replayed → the message ids the replay has introduced so far.
        self._replaying: dict[str, set[str]] = {}

    @property
    def version(self) -> int:
        return self._version

    @version.setter
    def version(self, value: int) -> None:
        """The agreed version; from 2 on the connection answers JSON-RPC batches."""
        self._version = value
        if hasattr(self.connection, "accepts_batches"):
            self.connection.accepts_batches = value >= 2

    @contextmanager
    def replay(self, session_id: str) -> Iterator[None]:
        """While history of ``session_id`` is replayed, each message starts whole.

        The v2 draft asks a replay to introduce every message with its whole-message update
        (``user_message`` / ``agent_message`` / ``agent_thought``, ``content: []``) before
        the chunks that fill it.
        """
        self._replaying[session_id] = set()
        try:
            yield
        finally:
            self._replaying.pop(session_id, None)

    async def send_notification(self, method: str, params: object = None) -> None:
        if self.version >= 2 and method == "session/update" and isinstance(params, dict):
            update = translate.update(params["update"])
            if update is None:
                return
            seen = self._replaying.get(params.get("sessionId"))  # type: ignore[arg-type]
            if seen is not None:
                whole = translate.message_start(update, seen)
                if whole is not None:
                    await self.connection.send_notification(method, {**params, "update": whole})
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
