"""JSON-RPC 2.0 over newline-delimited JSON: framing, envelopes, the dispatcher, stdio.

Layers, each usable alone: :mod:`.framing` (bytes → lines → JSON, sans-IO),
:mod:`.envelope` (JSON → request/notification/response/invalid, sans-IO),
:mod:`.connection` (the dispatcher and its FIFO :mod:`.writer`), :mod:`.stdio` (the process's
own stdin/stdout) and :mod:`.memory` (in-memory transports for tests). :mod:`.peer` names what
a sender needs of a connection. The same connection serves the ACP client on stdio and each
MCP server the agent starts (:mod:`iac_code.mcp.client`).
"""

from iac_code.rpc.connection import Connection, RequestHandler
from iac_code.rpc.context import CancelHook, RequestContext, current_request
from iac_code.rpc.errors import ConnectionClosedError
from iac_code.rpc.framing import DEFAULT_MAX_LINE_BYTES
from iac_code.rpc.peer import Peer

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "CancelHook",
    "Connection",
    "ConnectionClosedError",
    "Peer",
    "RequestContext",
    "RequestHandler",
    "current_request",
]
