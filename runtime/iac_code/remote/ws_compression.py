"""Whether the WebSocket server agrees to ``permessage-deflate`` (RFC 7692).

Hypercorn (0.17, 0.18) accepts the compression a client offers and has no setting to
decline it. For ACP it is a poor trade on the loopback connections editors use: the agent
streams many small frames (one per ``session/update``), and deflating and inflating each of
them halved the frames per second our WebSocket relay carried (bench ``remote_relay``:
20.7k → 41.8k chunks/s without it, same run). So the server declines the offer unless it is
asked to compress (``--ws-compression``, worth it on a slow network); declining is part of
the RFC's negotiation, every client copes with it.

The only place to decline is hypercorn's handshake, so this swaps the handshake class its
WebSocket stream builds for a subclass that forgets the offer when compression is off. If a
hypercorn release moves that class, nothing is swapped and compression stays as hypercorn
decides (a test fails, so we notice).
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["decline_compression"]

log = logging.getLogger("iac_code.remote")


def decline_compression(declined: bool = True) -> bool:
    """Make hypercorn's WebSocket handshake decline (or, with False, again accept) a
    ``permessage-deflate`` offer. Returns whether the handshake could be changed."""
    try:
        from hypercorn.protocol import ws_stream
    except ImportError:  # the [http] extra is missing; the server does not start anyway
        return False
    current = getattr(ws_stream, "Handshake", None)
    original: Any = getattr(current, "_iac_code_original", current)
    if original is None or not hasattr(original, "accept"):
        log.warning("hypercorn's WebSocket handshake moved: compression is left as it decides")
        return False
    if not declined:
        setattr(ws_stream, "Handshake", original)  # noqa: B010 (a module global of theirs)
        return True

    class UncompressedHandshake(original):
        _iac_code_original = original

        def accept(self, *args: Any, **kwargs: Any) -> Any:
            self.extensions = None  # as if the client had offered no extension
            return super().accept(*args, **kwargs)

    setattr(ws_stream, "Handshake", UncompressedHandshake)  # noqa: B010
    return True
