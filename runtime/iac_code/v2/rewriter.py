"""The agent's outbound messages rewritten into v2, on a connection that agreed v2.

The agent sends v1 shapes. :class:`V2Rewriter` is the :class:`~iac_code.rpc.peer.Peer` the
agent talks to once v2 is negotiated (see :mod:`iac_code.negotiated_peer`): it rewrites each
outbound message into v2 before it reaches the connection. A v1 connection never builds one.

A permission request or an elicitation blocks the turn on the user; the v2 handlers report
that as the session's ``requires_action`` state, so the rewriter tells its asking listeners
when one goes out and when it is answered (see :meth:`V2Rewriter.add_asking_listener`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import anyio
from acp_bindings.errors import MethodNotFoundError

from iac_code.rpc.frames import session_of
from iac_code.v2 import translate

if TYPE_CHECKING:
    from iac_code.rpc.peer import Peer

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


#: Called with (session id, True) just before a question to the user (a permission request,
#: an elicitation) of that session goes out, and with (session id, False) once it was
#: answered, failed or was given up.
AskingListener = Callable[[str, bool], Awaitable[None]]

#: The client methods that ask the user and wait for them.
_ASKING_METHODS = frozenset({"session/request_permission", "elicitation/create"})


class V2Rewriter:
    """Forwards to ``connection`` what the agent sends, in v2 shape."""

    def __init__(self, connection: Peer) -> None:
        self.connection = connection
        #: Sessions being replayed → the message ids the replay has introduced so far.
        self._replaying: dict[str, set[str]] = {}
        self._asking_listeners: list[AskingListener] = []

    def add_asking_listener(self, listener: AskingListener) -> None:
        self._asking_listeners.append(listener)

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
        if method == "session/update" and isinstance(params, dict):
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
        if method in _V1_ONLY_CLIENT_METHODS:
            raise MethodNotFoundError(data={"method": method})
        if method == "session/request_permission" and isinstance(params, dict):
            params = translate.permission_request(params)
        if method in _ASKING_METHODS and isinstance(params, dict):
            return await self._ask(method, params)
        return await self.connection.send_request(method, params)

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        """The request, with the listeners told before it goes out and after its answer."""
        session_id = session_of(params)
        if session_id is None:  # asked outside a session: no turn is blocked
            return await self.connection.send_request(method, params)
        for listener in self._asking_listeners:
            await listener(session_id, True)
        try:
            return await self.connection.send_request(method, params)
        finally:
            # Shielded: a cancelled turn gives up the request, and the state must still be
            # told that nothing waits on the user any more.
            with anyio.CancelScope(shield=True):
                for listener in self._asking_listeners:
                    await listener(session_id, False)
