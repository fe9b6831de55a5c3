"""Several WebSocket messages in one socket write: an ASGI extension added to hypercorn.

ACP over WebSocket carries one JSON-RPC message per text frame, and a streamed turn is
thousands of small ``session/update`` messages. Sent one ASGI ``websocket.send`` each, every
frame travels alone through hypercorn (its send lock, a socket write, a drain): with the
frames themselves cheap, that per-frame path was most of what the server spent on a
WebSocket relay, and the relay carried half the frames per second of a stdio pipe.

So the server's WebSocket stream gets one more ASGI message type, :data:`SEND_MANY`:
``{"type": SEND_MANY, "texts": [...]}`` frames each text as its own WebSocket message
(through wsproto, so a negotiated compression still applies per message) and writes them
all at once. On the wire nothing changes: the client receives the same frames, in order.

It is offered to the app as a scope extension (``scope["extensions"][SEND_MANY]``), which
only the swapped stream class sets: under any other ASGI server (or if a hypercorn release
moves the class and nothing is swapped) the extension is absent and the endpoint sends
frame by frame as before.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["SEND_MANY", "enable_batched_sends"]

log = logging.getLogger("iac_code.remote")

#: The ASGI message type (and scope extension name) of a batch of text frames.
SEND_MANY = "iac-code.websocket.send_many"

#: hypercorn modules that build WebSocket streams by the name ``WSStream``.
_BUILDERS = ("hypercorn.protocol.h11", "hypercorn.protocol.h2")


def enable_batched_sends(enabled: bool = True) -> bool:
    """Make hypercorn's WebSocket streams accept :data:`SEND_MANY` (or, with False, put
    hypercorn's own class back). Returns whether the streams could be changed."""
    import importlib

    try:
        from hypercorn.protocol import ws_stream
        from wsproto.events import TextMessage
        from wsproto.utilities import LocalProtocolError

        builders = [importlib.import_module(name) for name in _BUILDERS]
    except ImportError:  # the [http] extra is missing; the server does not start anyway
        return False
    original: Any = getattr(ws_stream, "WSStream", None)
    connected = getattr(getattr(ws_stream, "ASGIWebsocketState", None), "CONNECTED", None)
    data_event = getattr(ws_stream, "Data", None)
    if original is None or connected is None or data_event is None:
        log.warning("hypercorn's WebSocket stream moved: frames are sent one by one")
        return False
    batching = _batching_class(original, connected, data_event, TextMessage, LocalProtocolError)
    if not all(getattr(module, "WSStream", None) in (original, batching) for module in builders):
        log.warning("hypercorn builds WebSocket streams elsewhere: frames are sent one by one")
        return False
    chosen = batching if enabled else original
    for module in builders:
        setattr(module, "WSStream", chosen)  # noqa: B010 (a module global of theirs)
    return True


_MADE: dict[int, Any] = {}


def _batching_class(
    original: Any, connected: Any, data_event: Any, text_message: Any, protocol_error: Any
) -> Any:
    """The subclass of hypercorn's stream (made once per original class)."""
    made = _MADE.get(id(original))
    if made is not None:
        return made

    class BatchingWSStream(original):
        # hypercorn builds the scope in handle() and hands it to the app right away; a
        # property puts the extension in as the scope is assigned, before the app sees it.
        @property
        def scope(self) -> Any:
            return self._iac_code_scope

        @scope.setter
        def scope(self, value: Any) -> None:
            value.setdefault("extensions", {})[SEND_MANY] = {}
            self._iac_code_scope = value

        async def app_send(self, message: Any) -> None:
            if message is None or message.get("type") != SEND_MANY:
                await super().app_send(message)
                return
            if self.closed or self.state != connected:
                return  # as hypercorn does with sends after the close
            chunks = []
            try:
                for text in message["texts"]:
                    chunks.append(self.connection.send(text_message(data=text)))
            except protocol_error:  # the peer closed meanwhile: what is framed still goes
                pass
            if chunks:
                await self.send(data_event(stream_id=self.stream_id, data=b"".join(chunks)))

    _MADE[id(original)] = BatchingWSStream
    return BatchingWSStream
