"""Per-connection limits that keep one client from exhausting the agent process."""

from __future__ import annotations

from acp_bindings.errors import InvalidParamsError


def check_session_capacity(open_sessions: int, limit: int) -> None:
    """Refuse to open one more session when ``limit`` are open on this connection already.

    Checked before anything is written, so a refused session/new or fork leaves nothing on
    disk. The client can close an idle session (``session/close``) and try again.
    """
    if open_sessions >= limit:
        raise InvalidParamsError(
            f"Too many open sessions on this connection (limit {limit});"
            " close one with session/close first.",
            data={"sessionId": f"at most {limit} sessions may be open at once"},
        )
