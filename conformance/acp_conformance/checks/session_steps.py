"""The steps the session.* checks share: a session with one turn of history, the frames of
one exchange, the sessions a listing answered. No requirement is defined here."""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import Response
from ..scenarios._expect import result_dict
from ..scenarios.check_context import AgentRun, CheckContext, text_prompt

#: A session id no agent has issued.
UNKNOWN_SESSION = "acp-conformance-unknown-session"


async def session_with_history(ctx: CheckContext, run: AgentRun) -> tuple[str, Response]:
    """A session that has had one (text) prompt turn, so there is something to persist."""
    session_id = await ctx.new_session(run)
    response = await ctx.prompt_turn(run, text_prompt(session_id, "Say hello."))
    return session_id, response


def listed_sessions(response: Response) -> list[Any] | None:
    """The ``sessions`` array a session/list answered, or None when there is none."""
    sessions = result_dict(response).get("sessions")
    return sessions if isinstance(sessions, list) else None
