"""Tool calls and their permissions belong to a turn: an update names a tool call the agent
announced, a permission request comes while the turn runs (issue 36, item 4)."""

from __future__ import annotations

from collections.abc import Iterator

from ..harness.agent_client import id_key
from ..outcomes import Outcome
from ..requirements import RUN_WIDE, check
from ..scenarios.check_context import AgentRun, RunRecord
from ..versions import negotiated_version
from .run_walk import Offence, messages, per_run, session_updates


def _unknown_tool_updates(run: AgentRun) -> Iterator[Offence]:
    if negotiated_version(run) >= 2:
        return  # v2 keys its updates differently (version.v2-tool-call-ids)
    announced: dict[object, set[object]] = {}  # session → toolCallIds its tool_call updates named
    for frame, session, update in session_updates(run.frames):
        kind, tool_id = update.get("sessionUpdate"), update.get("toolCallId")
        known = announced.setdefault(session, set())
        if kind == "tool_call":
            known.add(tool_id)
        elif kind == "tool_call_update" and tool_id not in known:
            yield (
                frame,
                f"tool_call_update for toolCallId {tool_id!r}, which no tool_call of session "
                f"{session!r} announced",
            )


@check("prompt.tool-update-known-id", scenario=RUN_WIDE)
def tool_updates_name_announced_calls(record: RunRecord) -> list[Outcome]:
    return per_run(record, _unknown_tool_updates, "updates of unannounced tool calls")


def _late_permission_requests(run: AgentRun) -> Iterator[Offence]:
    if negotiated_version(run) >= 2:
        return  # a v2 prompt is answered at once; its turn ends with a state update
    running: dict[object, int] = {}  # session → prompts in flight
    prompts: dict[str, object] = {}  # id of a prompt request → its session
    answered: set[object] = set()  # sessions whose last prompt was answered
    for frame, msg, params in messages(run):
        if frame.direction == "c2a" and msg.get("method") == "session/prompt" and "id" in msg:
            session = params.get("sessionId")
            prompts[id_key(msg["id"])] = session
            running[session] = running.get(session, 0) + 1
        elif frame.direction == "a2c" and "method" not in msg and "id" in msg:
            session = prompts.pop(id_key(msg["id"]), _NONE)
            if session is not _NONE:
                running[session] = running.get(session, 1) - 1
                answered.add(session)
        elif frame.direction == "a2c" and msg.get("method") == "session/request_permission":
            session = params.get("sessionId")
            if session in answered and not running.get(session):
                yield (
                    frame,
                    f"session/request_permission for session {session!r} after its prompt "
                    "was answered (no turn was running)",
                )


_NONE = object()


@check("prompt.permission-within-turn", scenario=RUN_WIDE)
def permission_requests_within_turns(record: RunRecord) -> list[Outcome]:
    return per_run(record, _late_permission_requests, "permission requests after the turn")
