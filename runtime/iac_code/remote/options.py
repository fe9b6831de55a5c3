"""Settings of the remote transport: where it listens, who may talk to it, and its limits."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from iac_code.remote.principals import Authenticator

__all__ = ["RemoteLimits", "RemoteOptions", "is_loopback_host"]

TOKEN_ENV = "IACCODE_ACP_HTTP_TOKEN"


@dataclass(frozen=True)
class RemoteLimits:
    #: Live connections per server; one more ``initialize`` answers 503.
    max_connections: int = 256
    #: Bytes of agent output queued for a connection and not yet handed to a reader. Past it
    #: the agent waits (backpressure); after ``output_stall_seconds`` without progress the
    #: connection is closed, because its client is not coming back for the output.
    max_buffered_bytes: int = 16 * 2**20
    output_stall_seconds: float = 60.0
    #: Bytes of already-sent events each stream keeps for ``Last-Event-ID`` resumption...
    replay_bytes: int = 4 * 2**20
    #: ... and all streams of one connection together (each loaded session has a stream).
    replay_bytes_per_connection: int = 16 * 2**20
    #: A connection with no reader, no request and no WebSocket for this long is closed.
    idle_timeout_seconds: float = 600.0
    #: Largest POST body and WebSocket message.
    max_body_bytes: int = 8 * 2**20
    #: A POST body must have arrived this many seconds after the request started, else the
    #: request is answered 408 and its connection closed (a client that sends part of a
    #: body and stops would otherwise hold it, and its buffer, forever).
    body_timeout_seconds: float = 30.0
    #: Bytes of POST bodies being received, over all connections together; a request whose
    #: body would go past it is answered 503 with Retry-After.
    max_buffered_body_bytes: int = 64 * 2**20
    #: The last bytes of that cap (this much, at most an eighth of it) are kept for small
    #: bodies (at most ``small_body_bytes`` each, such as ``initialize`` or a permission
    #: answer): slow large uploads together hold at most the cap minus the reserve.
    small_body_reserve_bytes: int = 8 * 2**20
    small_body_bytes: int = 64 * 2**10
    #: Longest connection, session or request id accepted in a header or message.
    max_id_length: int = 1024
    #: How long ``initialize`` may take before the POST answers 504.
    initialize_timeout_seconds: float = 30.0
    #: Seconds between SSE keep-alive comments on an idle stream.
    keepalive_seconds: float = 15.0
    #: After SIGTERM, running turns may finish for this long before they are cancelled.
    drain_timeout_seconds: float = 30.0


@dataclass(frozen=True)
class RemoteOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    #: Bearer token clients must send; required whenever ``host`` is not a loopback address.
    token: str | None = None
    #: Who the callers are (``--auth tokens|jwt``); replaces ``token`` when set.
    authenticator: Authenticator | None = None
    #: Each principal's session directories must lie in ``workspace_root/<principal>``.
    workspace_root: Path | None = None
    #: Origins (``scheme://host[:port]``) allowed besides loopback ones.
    allowed_origins: tuple[str, ...] = ()
    #: Host names (``Host`` header, port ignored) allowed besides loopback ones; checked only
    #: when ``host`` is a loopback address, against DNS rebinding.
    allowed_hosts: tuple[str, ...] = ()
    #: Agree to permessage-deflate when a WebSocket client offers it (off: see ws_compression).
    websocket_compression: bool = False
    limits: RemoteLimits = field(default_factory=RemoteLimits)


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback IP literals (``127.0.0.0/8``, ``::1``)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
