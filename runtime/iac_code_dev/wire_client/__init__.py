"""One ACP client for the tests and the development tools (the demo).

A message-level JSON-RPC client (:class:`WireClient`: send a request and await its answer by
id, notifications and everything else kept in order in the transcript, the agent's requests
answered by per-method handlers, every wait bounded) over three transports: NDJSON pipes of
a subprocess or an in-memory stream (:mod:`.ndjson_pipes`), Streamable HTTP with SSE and
WebSocket (:mod:`.remote_transports`); :mod:`.blocking_agent` drives a subprocess from
synchronous code, and :mod:`.sse_events` is the one SSE parser.

The checker keeps its own harness (its distribution does not depend on this package), and
the bench its raw pipe client (it timestamps bytes as they are read).
"""

from .ndjson_pipes import (
    AgentProcess,
    NdjsonPipe,
    agent_command,
    open_agent_process,
    open_pipe_client,
)
from .rpc_client import (
    CANCELLED_ANSWER,
    NO_ANSWER,
    TIMEOUT,
    ErrorAnswer,
    Frame,
    Handler,
    Reply,
    WireClient,
    WireError,
    allow,
    allow_once,
    selected,
)

__all__ = [
    "CANCELLED_ANSWER",
    "NO_ANSWER",
    "TIMEOUT",
    "AgentProcess",
    "ErrorAnswer",
    "Frame",
    "Handler",
    "NdjsonPipe",
    "Reply",
    "WireClient",
    "WireError",
    "agent_command",
    "allow",
    "allow_once",
    "open_agent_process",
    "open_pipe_client",
    "selected",
]
