"""Small judgement helpers shared by scenario checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..harness.agent_client import Response
from ..harness.recorder import Frame
from ..outcomes import Outcome, failed, passed

if TYPE_CHECKING:
    from .check_context import AgentRun

#: The session/update kinds that belong to a prompt turn (not session state such as modes).
TURN_UPDATE_KINDS = frozenset(
    {
        "agent_message_chunk",
        "agent_thought_chunk",
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
    }
)

#: Codes the spec accepts for "that session does not exist".
UNKNOWN_SESSION_CODES = (-32602, -32002)


def exchange_frames(*responses: Response) -> list[int]:
    """Each exchange's request and answer frame numbers, in order, for an outcome's evidence."""
    return [seq for response in responses for seq in (response.request.seq, response.frame.seq)]


def brief(frame: Frame, limit: int = 200) -> str:
    return frame.text(limit)


def expect_error(response: Response, codes: tuple[int, ...], what: str) -> Outcome:
    """Pass when ``response`` is an error with one of ``codes``."""
    frames = exchange_frames(response)
    if not response.is_error:
        return failed(f"{what} succeeded: {brief(response.frame)}", frames=frames)
    code = response.error_code
    if code not in codes:
        wanted = " or ".join(str(c) for c in codes)
        return failed(f"{what} answered error {code}, expected {wanted}", frames=frames)
    return passed(f"{what} rejected with {code}", frames=frames)


def expect_result(response: Response, what: str) -> Outcome | None:
    """None when ``response`` is a result; a failing outcome otherwise."""
    if response.is_error:
        return failed(
            f"{what} failed: {brief(response.frame)}",
            frames=exchange_frames(response),
        )
    return None


def result_dict(response: Response) -> dict[str, Any]:
    return response.result if isinstance(response.result, dict) else {}


def update_of(frame: Frame, session_id: str) -> dict[str, Any] | None:
    """The update of ``frame`` when it is the agent's ``session/update`` for ``session_id``."""
    msg = frame.message
    if frame.direction != "a2c" or not isinstance(msg, dict):
        return None
    params = msg.get("params")
    if msg.get("method") != "session/update" or not isinstance(params, dict):
        return None
    update = params.get("update")
    if params.get("sessionId") != session_id or not isinstance(update, dict):
        return None
    return update


def session_updates(
    run: AgentRun, session_id: str, start: int, end: int
) -> list[tuple[int, dict[str, Any]]]:
    """(seq, update) of every session/update of ``session_id`` among frames [start, end)."""
    found = []
    for frame in run.frames[start:end]:
        if (update := update_of(frame, session_id)) is not None:
            found.append((frame.seq, update))
    return found
