"""Which requirements apply to a run, given its transport (stdio, ``--url``, ``--url --ws``).

Most requirements are about JSON-RPC and ACP and hold over any transport. A few judge the
stdio framing or the agent's process (stdout lines, stdin EOF, signals, orphans); a remote agent
has neither, so they are not applicable to ``--url`` runs — the ``http.*`` / ``ws.*``
requirements judge the remote framing instead. Prompt-turn requirements drive the checker's
scripted model, which only an agent the checker starts can be pointed at.
"""

from __future__ import annotations

from .config import RunConfig
from .requirements import TRANSPORTS, Requirement

_STDIO_FRAMING = (
    "judges stdio framing; a remote agent's framing is judged by the http.*/ws.* checks"
)
_PROCESS = "judges the agent process's lifecycle, which a remote agent does not expose"

#: Requirement id → why it does not apply to any remote run.
NOT_REMOTE: dict[str, str] = {
    "transport.stdout-only-json": _STDIO_FRAMING,
    "transport.newline-terminated": _STDIO_FRAMING,
    "transport.utf8": _STDIO_FRAMING,
    "robustness.oversized-line": _STDIO_FRAMING,
    "robustness.invalid-utf8": _STDIO_FRAMING,
    "shutdown.exits-on-stdin-eof": _PROCESS,
    "shutdown.no-sigkill-needed": _PROCESS,
    "shutdown.no-orphans": _PROCESS,
}

#: Not applicable to HTTP runs only: over WebSocket a text frame is still parsed as JSON-RPC.
NOT_HTTP: dict[str, str] = {
    "jsonrpc.parse-error": "over HTTP a body that is not JSON is judged by http.invalid-json",
    "jsonrpc.invalid-request": "over HTTP non-request bodies are judged by http.invalid-message",
}


#: Not applicable to WebSocket runs only.
NOT_WS: dict[str, str] = {
    "init.repeatable": "over WebSocket initialize opens the connection; the transport refuses "
    "a second one on the same socket",
}


def transports(requirement: Requirement) -> tuple[str, ...]:
    """The transports ``requirement`` applies to, by the same tables :func:`exemption` reads."""
    if requirement.area in ("http", "ws"):
        return (requirement.area,)
    if requirement.id in NOT_REMOTE:
        return ("stdio",)
    if requirement.id in NOT_HTTP:
        return ("stdio", "ws")
    if requirement.id in NOT_WS:
        return ("stdio", "http")
    return TRANSPORTS


def exemption(requirement: Requirement, config: RunConfig) -> str | None:
    """Why ``requirement`` does not apply to this run's transport, or None when it does."""
    remote = config.remote
    area = requirement.area
    if remote is None:
        if area in ("http", "ws"):
            return "applies to remote agents only (--url)"
        return None
    if area == "http" and remote.websocket:
        return "applies to Streamable HTTP runs (without --ws)"
    if area == "ws" and not remote.websocket:
        return "applies to WebSocket runs (--ws)"
    if requirement.id in NOT_REMOTE:
        return NOT_REMOTE[requirement.id]
    if not remote.websocket and requirement.id in NOT_HTTP:
        return NOT_HTTP[requirement.id]
    if remote.websocket and requirement.id in NOT_WS:
        return NOT_WS[requirement.id]
    if requirement.llm and not config.argv:
        return (
            "needs the checker's scripted model, which a remote agent is not pointed at "
            "(give the server command after -- to run it)"
        )
    return None
