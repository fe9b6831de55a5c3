"""A v2 turn blocked on the user says so: ``requires_action`` while a permission request or
a session's elicitation waits for the answer, and ``running`` again before the turn makes
progress (issue 36, item 4; the official kit's PATCH-209).

Both are judged over the recorded frames of every v2 agent process, so any turn that asked
the user is judged, whichever scenario provoked it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..harness.agent_client import id_key
from ..harness.recorder import Frame
from ..outcomes import Outcome, Verdict, not_applicable
from ..requirements import RUN_WIDE, check
from ..scenarios.check_context import AgentRun, RunRecord
from ..versions import negotiated_version
from .run_walk import Offence, messages, per_run

#: The agent's requests that wait for the user.
_ASKING = frozenset({"session/request_permission", "elicitation/create"})
#: The model speaking again is foreground progress (tool updates may be background work).
_PROGRESS_KINDS = frozenset({"agent_message_chunk", "agent_thought_chunk"})


@dataclass
class _Asked:
    frame: Frame
    session: object
    method: str
    #: The session's state was requires_action at some moment while the request waited.
    reported: bool


def _walk(run: AgentRun) -> Iterator[tuple[str, Frame, str]]:
    """("unreported" | "not-resumed", frame, why) for each offence of the run."""
    state: dict[object, str] = {}  # session → the last state its state_update reported
    pending: dict[str, _Asked] = {}  # id of a question to the user → what it asked
    for frame, msg, params in messages(run):
        method = msg.get("method")
        if frame.direction == "a2c" and method in _ASKING and "id" in msg:
            session = params.get("sessionId")
            if session is None:
                continue  # an elicitation outside a session blocks no turn
            blocked = state.get(session) == "requires_action"
            pending[id_key(msg["id"])] = _Asked(frame, session, str(method), blocked)
        elif frame.direction == "c2a" and method is None and "id" in msg:
            asked = pending.pop(id_key(msg["id"]), None)
            if asked is not None and not asked.reported:
                yield (
                    "unreported",
                    asked.frame,
                    f"{asked.method} for session {asked.session!r} was answered "
                    f"at #{frame.seq} with the session's state "
                    f"{state.get(asked.session, 'idle')!r} throughout (no requires_action)",
                )
        elif frame.direction == "a2c" and method == "session/update":
            session, update = params.get("sessionId"), params.get("update")
            if not isinstance(update, dict):
                continue
            kind = update.get("sessionUpdate")
            if kind == "state_update" and isinstance(update.get("state"), str):
                state[session] = update["state"]
                if update["state"] == "requires_action":
                    for asked in pending.values():
                        if asked.session == session:
                            asked.reported = True
            elif (
                kind in _PROGRESS_KINDS
                and state.get(session) == "requires_action"
                and not any(asked.session == session for asked in pending.values())
            ):
                yield (
                    "not-resumed",
                    frame,
                    f"{kind} for session {session!r} while its last state is still "
                    "requires_action (no running after the user answered)",
                )
                state[session] = "running"  # reported once per blocked stretch


def _offences(kind: str) -> Callable[[AgentRun], Iterator[Offence]]:
    """The finder of one kind of offence, for :func:`per_run`."""

    def find(run: AgentRun) -> Iterator[Offence]:
        if negotiated_version(run) < 2:
            return
        for found, frame, why in _walk(run):
            if found == kind:
                yield frame, why

    return find


@check("version.v2-requires-action-while-asked", scenario=RUN_WIDE)
def permission_waits_are_reported(record: RunRecord) -> list[Outcome]:
    outcomes = per_run(record, _offences("unreported"), "questions to the user never reported")
    return _judged_only_if_asked(record, outcomes)


@check("version.v2-requires-action-resumes", scenario=RUN_WIDE)
def blocked_turns_report_running_again(record: RunRecord) -> list[Outcome]:
    outcomes = per_run(record, _offences("not-resumed"), "turns resumed while requires_action")
    return _judged_only_if_asked(record, outcomes)


def _judged_only_if_asked(record: RunRecord, outcomes: list[Outcome]) -> list[Outcome]:
    """A pass means something only if a v2 turn asked the user at all."""
    if any(o.verdict is not Verdict.PASS for o in outcomes):
        return outcomes
    asked = sum(
        1
        for run in record.runs
        if negotiated_version(run) >= 2
        for frame in run.frames
        if frame.direction == "a2c"
        and isinstance(frame.message, dict)
        and frame.message.get("method") in _ASKING
    )
    if not asked:
        return [not_applicable("no v2 turn asked the user (permission, elicitation) in this run")]
    return outcomes
