"""Run-wide checks: the sessions a turn's updates name, and when. Updates name the prompted
session, a known session, one already handed out, and arrive before the prompt's answer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..harness.agent_client import id_key
from ..harness.recorder import Frame
from ..outcomes import (
    Outcome,
)
from ..requirements import RUN_WIDE, check
from ..scenarios._expect import TURN_UPDATE_KINDS
from ..scenarios.check_context import AgentRun, RunRecord
from ..versions import negotiated_version
from .run_walk import Offence, per_run
from .wire import is_response

#: Updates that belong to a running turn (replays and announcements may name any session).
TURN_KINDS = frozenset(
    {"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"}
)


def _session_of(params: object) -> object:
    return params.get("sessionId") if isinstance(params, dict) else None


def _cross_talk(run: AgentRun) -> Iterator[Offence]:
    in_flight: dict[str, tuple[str, object]] = {}  # request id -> (method, session named)
    for frame in run.frames:
        msg = frame.message
        if not isinstance(msg, dict):
            continue
        method = msg.get("method")
        if frame.direction == "c2a" and isinstance(method, str) and "id" in msg:
            in_flight[id_key(msg["id"])] = (method, _session_of(msg.get("params")))
        elif frame.direction == "a2c" and method is None and "id" in msg:
            in_flight.pop(id_key(msg["id"]), None)
        elif frame.direction == "a2c" and method == "session/update":
            params = msg.get("params")
            update = params.get("update") if isinstance(params, dict) else None
            kind = update.get("sessionUpdate") if isinstance(update, dict) else None
            if kind not in TURN_KINDS:
                continue
            waiting = list(in_flight.values())
            # Judged only when the prompt is the one thing in flight: then the turn is its.
            if len(waiting) != 1 or waiting[0][0] != "session/prompt":
                continue
            prompted, named = waiting[0][1], _session_of(params)
            if named != prompted:
                yield (
                    frame,
                    (
                        f"a {kind} update names session {named!r} while only session "
                        f"{prompted!r}'s prompt was running"
                    ),
                )


@check("prompt.updates-name-prompted-session", scenario=RUN_WIDE)
def updates_name_the_prompted_session(record: RunRecord) -> list[Outcome]:
    return per_run(record, _cross_talk, "turn updates naming another session")


def _update_kind(msg: dict[str, Any]) -> tuple[str | None, str | None]:
    params = msg.get("params")
    if not isinstance(params, dict):
        return None, None
    update = params.get("update")
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return params.get("sessionId"), kind


@check("prompt.updates-before-response", scenario=RUN_WIDE)
def updates_before_response(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        if negotiated_version(run) >= 2:
            return  # v2 answers a prompt at once and ends the turn with a state_update
        open_requests: dict[str, tuple[str, str]] = {}  # id → (method, session)
        finished: dict[str, int] = {}  # session → seq of the prompt response that ended it
        for frame in run.frames:
            msg = frame.message
            if not isinstance(msg, dict):
                continue
            if frame.direction == "c2a":
                params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
                session = params.get("sessionId") if params else None
                starts_turn = msg.get("method") in ("session/prompt", "session/load")
                if starts_turn and "id" in msg and isinstance(session, str):
                    open_requests[id_key(msg["id"])] = (msg["method"], session)
                    finished.pop(session, None)
                continue
            if is_response(msg):
                opened = open_requests.pop(id_key(msg["id"]), None)
                # A second prompt rejected while the first runs does not end that turn: the
                # session is done only when no turn request for it is open any more. A load's
                # replay that comes after its response is session.load-replays-before-
                # response's finding, not a turn's: only a prompt's response ends a turn here.
                if opened is None or opened[0] != "session/prompt":
                    continue
                if all(s != opened[1] for _, s in open_requests.values()):
                    finished[opened[1]] = frame.seq
                continue
            if msg.get("method") == "session/update" and "id" not in msg:
                session, kind = _update_kind(msg)
                if kind in TURN_UPDATE_KINDS and session in finished:
                    yield (
                        frame,
                        (f"{kind} for session {session} after the response #{finished[session]}"),
                    )

    return per_run(record, find, "turn updates after their response")


#: The methods whose result hands out a new session id.
SESSION_CREATING_METHODS = frozenset({"session/new", "session/fork"})


@dataclass
class _SessionLedger:
    """Which session ids one agent process handed out, and what became of ids the client
    named in its requests (frame sequence numbers, first occurrence)."""

    handed_out: dict[str, int] = field(default_factory=dict)
    named: dict[str, int] = field(default_factory=dict)
    accepted: dict[str, int] = field(default_factory=dict)
    #: id → (request seq, method, response seq, error code) of the first rejection.
    rejected: dict[str, tuple[int, str, int, Any]] = field(default_factory=dict)


def _session_id_of(msg: dict[str, Any]) -> str | None:
    params = msg.get("params")
    session = params.get("sessionId") if isinstance(params, dict) else None
    return session if isinstance(session, str) else None


def _names_a_session(msg: dict[str, Any]) -> bool:
    method = msg.get("method")
    return (
        isinstance(method, str)
        and method.split("/")[0] in ("session", "fs", "terminal")
        and isinstance(msg.get("params"), dict)
        and "sessionId" in msg["params"]
    )


def _scan_sessions(run: AgentRun) -> tuple[_SessionLedger, list[tuple[Frame, Any]]]:
    """The ledger of ``run`` and the agent messages naming a session that was neither handed
    out nor accepted from the client by the time they were sent."""
    ledger = _SessionLedger()
    pending: dict[str, tuple[str, int, str]] = {}  # request id → (session, seq, method)
    methods: dict[str, str] = {}  # request id → method, for every client request
    suspects: list[tuple[Frame, Any]] = []
    for frame in run.frames:
        msg = frame.message
        if not isinstance(msg, dict):
            continue
        if frame.direction == "c2a":
            if isinstance(msg.get("method"), str) and "id" in msg:
                methods[id_key(msg["id"])] = msg["method"]
            session = _session_id_of(msg)
            if session is not None and "method" in msg and "id" in msg:
                pending[id_key(msg["id"])] = (session, frame.seq, str(msg["method"]))
                ledger.named.setdefault(session, frame.seq)
            continue
        if is_response(msg):
            result = msg.get("result")
            # Only these results create a session; a load/resume result that repeats the
            # id the client asked for hands nothing out (its replay named it already).
            creates = methods.get(id_key(msg["id"])) in SESSION_CREATING_METHODS
            if creates and isinstance(result, dict) and isinstance(result.get("sessionId"), str):
                ledger.handed_out.setdefault(result["sessionId"], frame.seq)
            asked = pending.pop(id_key(msg["id"]), None)
            if asked is not None:
                session, request_seq, method = asked
                if "error" in msg:
                    err = msg["error"]
                    code = err.get("code") if isinstance(err, dict) else None
                    ledger.rejected.setdefault(session, (request_seq, method, frame.seq, code))
                else:
                    ledger.accepted.setdefault(session, frame.seq)
            continue
        if _names_a_session(msg):
            session = msg["params"]["sessionId"]
            if session not in ledger.handed_out and session not in ledger.accepted:
                suspects.append((frame, session))
    return ledger, suspects


def _described(frame: Frame) -> str:
    method = str(frame.message.get("method"))
    _, kind = _update_kind(frame.message)
    return f"{method} ({kind})" if method == "session/update" and kind else method


def _early_offence(frame: Frame, session: Any, ledger: _SessionLedger) -> str | None:
    """``frame`` names a session the agent handed out only later (a house rule)."""
    later = ledger.handed_out.get(session) if isinstance(session, str) else None
    if later is None:
        return None
    return (
        f"{_described(frame)} names session {session!r} before the agent handed it out "
        f"(in #{later})"
    )


def _unknown_session_offence(frame: Frame, session: Any, ledger: _SessionLedger) -> str | None:
    """What is wrong with ``frame`` naming ``session``, or None when the agent hands the
    session out (judged by `_early_offence`) or the client had named it in a request the
    agent did not reject (that acceptance, if the id was unknown, is judged by
    session.unknown-id-rejected and the *-unknown-id requirements)."""
    method = _described(frame)
    if isinstance(session, str) and session in ledger.handed_out:
        return None
    named = ledger.named.get(session) if isinstance(session, str) else None
    if named is not None and named < frame.seq:
        if session in ledger.accepted:
            return None
        if session in ledger.rejected:
            request_seq, asked, response_seq, code = ledger.rejected[session]
            return (
                f"{method} names session {session!r}, which the client sent in {asked} "
                f"#{request_seq} and the agent itself rejected (error {code} in #{response_seq})"
            )
        return None  # the request naming it is still unanswered: the agent is working on it
    return (
        f"{method} names session {session!r}, which the agent never handed out "
        "and the client never named"
    )


@check("prompt.updates-name-known-session", scenario=RUN_WIDE)
def updates_name_known_session(record: RunRecord) -> list[Outcome]:
    client_named = 0

    def find(run: AgentRun) -> Iterator[Offence]:
        nonlocal client_named
        ledger, suspects = _scan_sessions(run)
        for frame, session in suspects:
            why = _unknown_session_offence(frame, session, ledger)
            if why is None:
                client_named += 1
            else:
                yield frame, why

    outcomes = per_run(record, find, "messages naming a session the client could not know")
    if client_named and all(o.verdict.value == "pass" for o in outcomes):
        outcomes[0].reason += (
            f"; {client_named} named sessions the client supplied and the agent accepted "
            "(accepting unknown ids is judged by session.unknown-id-rejected)"
        )
    return outcomes


@check("prompt.updates-after-session-handed-out", scenario=RUN_WIDE)
def updates_after_session_handed_out(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        ledger, suspects = _scan_sessions(run)
        for frame, session in suspects:
            if (why := _early_offence(frame, session, ledger)) is not None:
                yield frame, why

    return per_run(record, find, "messages naming a session before it was handed out")
