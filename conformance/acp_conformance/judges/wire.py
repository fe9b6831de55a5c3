"""Run-wide checks: rules every recorded frame of every agent process must obey.

These are pure functions over the recordings, so they judge all the traffic the scenarios
produced, including traffic no scenario specifically looked at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..citations import ERROR_CODES, STDIO, acp, house, jsonrpc, schema_requires
from ..fuzzing import resolved_schema
from ..harness.agent_client import id_key, id_text
from ..harness.process import Rung
from ..harness.recorder import Frame
from ..outcomes import (
    Outcome,
    Verdict,
    failed,
    harness_error,
    not_applicable,
    out_of_scope,
    passed,
    soften,
)
from ..requirements import RUN_WIDE, Tier, check, requirement
from ..scenarios._expect import TURN_UPDATE_KINDS
from ..scenarios.check_context import AgentRun, RunRecord, advertised, surface_value
from ..validation import method_index, validate_frames
from ..versions import negotiated_version, schema_version, schemas_for

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


@requirement(
    "prompt.updates-name-prompted-session",
    Tier.MUST,
    "While one session's prompt is the only request in flight, the turn's updates (messages, "
    "thoughts, tool calls, plans) name that session, never another session of the connection.",
    schema_requires("SessionNotification.sessionId, the session the update pertains to")
    + "; "
    + acp("prompt-turn", "Agent reports output"),
    scenario=RUN_WIDE,
)
def updates_name_the_prompted_session(record: RunRecord) -> list[Outcome]:
    return per_run(record, _cross_talk, "turn updates naming another session")


Offence = tuple[Frame, str]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def per_run(
    record: RunRecord, find: Callable[[AgentRun], Iterator[Offence]], what: str
) -> list[Outcome]:
    """One failing outcome per run with offences, or a single pass."""
    outcomes: list[Outcome] = []
    checked = 0
    for run in record.runs:
        checked += sum(1 for f in run.frames if f.direction == "a2c")
        offences = list(find(run))
        if offences:
            first = "; ".join(f"#{frame.seq}: {why}" for frame, why in offences[:3])
            outcome = failed(
                f"{len(offences)} {what} in {run.id}: {first}",
                frames=[frame.seq for frame, _ in offences[:10]],
                offences=[
                    {"seq": f.seq, "why": why, "line": f.text(300)} for f, why in offences[:10]
                ],
            )
            outcome.run_id = run.id
            outcomes.append(outcome)
    if not outcomes:
        if not checked:
            return [not_applicable("no agent frames were recorded")]
        return [passed(f"{checked} agent frames in {len(record.runs)} processes checked")]
    return outcomes


def _agent_frames(run: AgentRun) -> Iterator[Frame]:
    return (f for f in run.frames if f.direction == "a2c")


def session_updates(frames: Iterable[Frame]) -> Iterator[tuple[Frame, Any, dict[str, Any]]]:
    """(frame, sessionId, update) of each well-formed ``session/update`` the agent sent."""
    for frame in frames:
        msg = frame.message
        if frame.direction != "a2c" or not isinstance(msg, dict):
            continue
        params = msg.get("params")
        if msg.get("method") != "session/update" or not isinstance(params, dict):
            continue
        update = params.get("update")
        if isinstance(update, dict):
            yield frame, params.get("sessionId"), update


def _is_batch(message: Any) -> bool:
    return (
        isinstance(message, list)
        and bool(message)
        and all(isinstance(item, dict) for item in message)
    )


@requirement(
    "transport.stdout-only-json",
    Tier.MUST,
    "Every line the agent writes to stdout is a JSON-RPC message; logs go to stderr.",
    acp(
        "transports",
        "stdio",
        "MUST NOT write anything to its stdout that is not a valid ACP message",
    ),
    scenario=RUN_WIDE,
)
def stdout_only_json(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        # The v2 draft allows a batch: a non-empty array of message objects on one line.
        batches = negotiated_version(run) >= 2
        for frame in _agent_frames(run):
            if frame.oversized:
                continue  # judged by transport.output-bounded (the checker's line cap)
            if frame.part_of is not None:
                continue  # a line of a message split over lines: transport.newline-terminated
            if not frame.is_json:
                yield frame, f"not JSON ({frame.decode_error})"
            elif batches and _is_batch(frame.message):
                continue
            elif not isinstance(frame.message, dict):
                yield frame, "JSON but not an object"

    return per_run(record, find, "non-protocol lines on stdout")


@requirement(
    "transport.newline-terminated",
    Tier.MUST,
    "Every message on stdout ends with a newline and contains no raw newline.",
    acp("transports", "stdio", "delimited by newlines, and MUST NOT contain embedded newlines"),
    scenario=RUN_WIDE,
)
def newline_terminated(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in _agent_frames(run):
            if not frame.terminated and not frame.oversized:
                yield frame, "stdout ended without a newline after this data"
            elif frame.split_from is not None:
                lines = frame.seq - frame.split_from + 1
                yield (
                    frame,
                    f"one message written over {lines} lines (#{frame.split_from}-#{frame.seq}: "
                    f"pretty-printed, or a raw newline inside); its {lines - 1} earlier lines, "
                    "not JSON on their own, are this defect too",
                )

    return per_run(record, find, "unterminated or split messages")


@requirement(
    "transport.utf8",
    Tier.MUST,
    "stdout is valid UTF-8.",
    acp("transports", "Transports", "JSON-RPC messages MUST be UTF-8 encoded"),
    scenario=RUN_WIDE,
)
def utf8(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in _agent_frames(run):
            if frame.decode_error and frame.decode_error.startswith("invalid UTF-8"):
                yield frame, frame.decode_error

    return per_run(record, find, "non-UTF-8 lines")


def envelope_problem(msg: dict[str, Any]) -> str | None:
    """Why ``msg`` is not a well-formed JSON-RPC 2.0 message, or None."""
    if msg.get("jsonrpc") != "2.0":
        return f"jsonrpc is {msg.get('jsonrpc')!r}, not '2.0'"
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return "method is not a string"
        if "id" in msg and not (_is_int(msg["id"]) or isinstance(msg["id"], str)):
            return f"request id {msg['id']!r} is neither an integer nor a string"
        if "params" in msg and not isinstance(msg["params"], dict | list):
            return "params is neither an object nor an array"
        if "result" in msg or "error" in msg:
            return "a request/notification carries result or error"
        return None
    if "id" not in msg:
        return "neither a request (method) nor a response (id)"
    if not (_is_int(msg["id"]) or isinstance(msg["id"], str) or msg["id"] is None):
        return f"response id {msg['id']!r} is not an integer, string or null"
    return None


@requirement(
    "jsonrpc.envelope-valid",
    Tier.MUST,
    'Every agent message has jsonrpc "2.0" and is a well-formed request, notification or response.',
    jsonrpc(
        "§4 Request object / §5 Response object",
        "request_object",
        'MUST be exactly "2.0" ... id: This member is REQUIRED',
    ),
    scenario=RUN_WIDE,
)
def envelope_valid(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in _agent_frames(run):
            if isinstance(frame.message, dict) and (why := envelope_problem(frame.message)):
                yield frame, why

    return per_run(record, find, "malformed envelopes")


def _is_response(msg: Any) -> bool:
    return isinstance(msg, dict) and "method" not in msg and "id" in msg


@requirement(
    "jsonrpc.response-exclusive",
    Tier.MUST,
    "A response has exactly one of result and error.",
    jsonrpc(
        "§5 Response object",
        "response_object",
        "both members MUST NOT be included",
    ),
    scenario=RUN_WIDE,
)
def response_exclusive(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in _agent_frames(run):
            msg = frame.message
            if _is_response(msg) and ("result" in msg) == ("error" in msg):
                yield frame, "has both result and error" if "result" in msg else "has neither"

    return per_run(record, find, "responses without exactly one of result/error")


@requirement(
    "jsonrpc.error-shape",
    Tier.MUST,
    "Every error object has an integer code and a string message.",
    jsonrpc("§5.1 Error object", "error_object", "code ... This MUST be an integer")
    + "; "
    + schema_requires("Error.code (integer) and Error.message (string)"),
    scenario=RUN_WIDE,
)
def error_shape(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in _agent_frames(run):
            msg = frame.message
            if not (_is_response(msg) and "error" in msg):
                continue
            err = msg["error"]
            if not isinstance(err, dict):
                yield frame, "error is not an object"
            elif not _is_int(err.get("code")):
                yield frame, f"error code {err.get('code')!r} is not an integer"
            elif not isinstance(err.get("message"), str):
                yield frame, "error message is not a string"

    return per_run(record, find, "malformed error objects")


_LOOSE_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def loose_id(frame: Frame) -> tuple[bool, Any]:
    """The id a line the checker sent carries, even when the line is not valid JSON or not
    UTF-8 (an agent that decodes leniently may answer it): ``(found, id)``."""
    if frame.is_json:
        msg = frame.message
        return (True, msg["id"]) if isinstance(msg, dict) and "id" in msg else (False, None)
    match = _LOOSE_ID.search(frame.raw)
    if match is None:
        return False, None
    try:
        return True, json.loads(match.group(1).decode("utf-8", errors="replace"))
    except json.JSONDecodeError:
        return False, None


def _same_text(rid: Any, required: dict[str, Frame], optional: set[str]) -> str | None:
    """The key of a sent, unanswered id with the text of ``rid`` but another type."""
    text = id_text(rid)
    if text is None:
        return None
    for key in [*required, *optional]:
        if id_text(json.loads(key)) == text:
            return key
    return None


@requirement(
    "jsonrpc.one-response-per-request",
    Tier.MUST,
    "Every request gets exactly one response; the agent never answers ids it was not sent.",
    jsonrpc("§5 Response object", "response_object", "the Server MUST reply with a Response"),
    scenario=RUN_WIDE,
)
def one_response_per_request(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        required: dict[str, Frame] = {}  # well-formed requests that must be answered
        optional: set[str] = set()  # ids on deliberately bad lines: an answer is allowed
        answered: set[str] = set()
        for frame in run.frames:
            msg = frame.message
            if frame.direction == "c2a":
                if not frame.is_json:
                    # An undecodable probe line still carries an id the agent may answer.
                    found, probe_id = loose_id(frame)
                    if found:
                        optional.add(id_key(probe_id))
                elif isinstance(msg, dict) and "id" in msg:
                    key = id_key(msg["id"])
                    if "method" in msg and not frame.deliberate:
                        required[key] = frame
                    else:
                        optional.add(key)
                elif isinstance(msg, list):
                    # A batch line: how its requests are answered (one -32600, or line by
                    # line) is the batch rule's to judge; an answer to one is no stray.
                    optional.update(
                        id_key(m["id"]) for m in msg if isinstance(m, dict) and "id" in m
                    )
                continue
            if not _is_response(msg):
                continue
            key = id_key(msg["id"])
            if msg["id"] is None:
                continue  # parse-error style answers; judged by the specific checks
            if key in answered:
                yield frame, f"second response to id {msg['id']!r}"
            elif key in required:
                del required[key]
                answered.add(key)
            elif key in optional:
                optional.discard(key)
                answered.add(key)
            elif (sent := _same_text(msg["id"], required, optional)) is not None:
                # An answer whose id changed type (1 came back as "1"): jsonrpc.id-echo's
                # defect; the request counts as answered here so it is not charged twice.
                required.pop(sent, None)
                optional.discard(sent)
                answered.add(sent)
            else:
                yield frame, f"response to id {msg['id']!r}, which the client never sent"
        agent_stayed_up = run.exit is not None and run.exit.rung is not Rung.ALREADY_EXITED
        if agent_stayed_up:
            for frame in required.values():
                if frame.seq in run.recorder.abandoned:
                    # The check that sent it timed out and said so; the checker may have
                    # stopped the agent before a slow answer could come.
                    continue
                method = frame.message.get("method")
                yield frame, f"request {method} (id {frame.message['id']!r}) was never answered"

    return per_run(record, find, "request/response mismatches")


def _violations(record: RunRecord) -> list[tuple[AgentRun, Any]] | str:
    if record.backend is None:
        return record.backend_error or "schema validator unavailable"
    if "violations" not in record.cache:
        index = method_index()
        found: list[tuple[AgentRun, Any]] = []
        for run in record.runs:
            # Each run is judged by the schemas of the version it negotiated.
            judged_by = schemas_for(run, record.backend, index, record.config.v2_draft)
            if judged_by is not None:
                found.extend((run, v) for v in validate_frames(run.frames, *judged_by))
        record.cache["violations"] = found
    cached: list[tuple[AgentRun, Any]] = record.cache["violations"]
    return cached


@requirement(
    "schema.agent-messages-valid",
    Tier.MUST,
    "Every agent message validates against its method's schema (responses: the request's method).",
    schema_requires("the params and result shapes of every method"),
    scenario=RUN_WIDE,
)
def agent_messages_valid(record: RunRecord) -> list[Outcome]:
    found = _violations(record)
    if isinstance(found, str):
        return [harness_error(found)]
    outcomes = []
    by_run: dict[str, list[Any]] = {}
    for run, violation in found:
        if violation.direction == "a2c" and violation.part != "error-data":
            by_run.setdefault(run.id, []).append(violation)
    runs = {run.id: run for run in record.runs}
    for run_id, violations in by_run.items():
        null = [v for v in violations if _null_for_optional_object(runs[run_id], v)]
        hard = [v for v in violations if v not in null]
        for group, soft in ((hard, None), (null, NULL_RESULT)):
            if not group:
                continue
            outcome = failed(
                f"{len(group)} schema violations in {run_id}: {group[0].describe()}",
                frames=[v.seq for v in group[:10]],
                violations=[v.to_json() for v in group[:20]],
            )
            outcome.run_id = run_id
            outcomes.append(soften(outcome, soft) if soft else outcome)
    total = sum(1 for run in record.runs for f in run.frames if f.direction == "a2c" and f.is_json)
    return outcomes or [passed(f"{total} agent messages validated")]


#: Why ``result: null`` for a result object without required fields is judged as SHOULD.
NULL_RESULT = (
    "result null where the schema defines an object with no required field (the spec once "
    "showed null for session/load; judged as SHOULD)"
)


def _null_for_optional_object(run: AgentRun, violation: Any) -> bool:
    """Whether ``violation`` is a ``result: null`` answering a method whose result is an object
    with no required field (``{}`` would do): ACP's own examples used null there."""
    if violation.part != "result" or violation.seq >= len(run.frames):
        return False
    msg = run.frames[violation.seq].message
    if not (isinstance(msg, dict) and "result" in msg and msg["result"] is None):
        return False
    version = schema_version(run)
    if version is None:
        return False
    entry = method_index(version).get(violation.method) or {}
    if not entry.get("result"):
        return False
    schema = resolved_schema(entry["file"], entry["result"], version)
    return not schema.get("required")


#: Why ``schema.error-data-shapes`` does not apply under ``--profile acp``.
ACP_ERROR_DATA = (
    "ACP's error object allows any `data` (or none); the per-code data shapes are iac-code's "
    "own convention, judged only under --profile iac-code"
)


@requirement(
    "schema.error-data-shapes",
    Tier.SHOULD,
    "Error data follows the per-code shapes of the error schemas (e.g. -32601 names the method).",
    house("per-code error data shapes of schema/errors", ERROR_CODES),
    scenario=RUN_WIDE,
    house=True,
)
def error_data_shapes(record: RunRecord) -> list[Outcome]:
    """ACP's error object leaves ``data`` free (any value, or none): the per-code shapes are
    iac-code's own convention (SPEC §1.1), so only ``--profile iac-code`` judges them; under
    ``--profile acp`` the rule does not apply and can never fail a peer."""
    if record.config.profile == "acp":
        return [out_of_scope(ACP_ERROR_DATA)]
    found = _violations(record)
    if isinstance(found, str):
        return [harness_error(found)]
    bad = [(run, v) for run, v in found if v.direction == "a2c" and v.part == "error-data"]
    if not bad:
        return [passed("every error's data matches its code's schema")]
    run, first = bad[0]
    outcome = failed(
        f"{len(bad)} errors with data not matching their code's schema: {first.describe()}",
        frames=[v.seq for _, v in bad[:10]],
        violations=[v.to_json() for _, v in bad[:20]],
    )
    outcome.run_id = run.id
    return [outcome]


@requirement(
    "harness.client-messages-valid",
    Tier.INFO,
    "The checker's own non-probe messages validate against the schemas (a harness self-check).",
    acp(
        "transports",
        "stdio",
        "The client MUST NOT write anything to the agent's stdin that is not a valid ACP message",
    ),
    scenario=RUN_WIDE,
)
def client_messages_valid(record: RunRecord) -> list[Outcome]:
    found = _violations(record)
    if isinstance(found, str):
        return [harness_error(found)]
    mine = [(run, v) for run, v in found if v.direction == "c2a" and not v.deliberate]
    if mine:
        run, first = mine[0]
        outcome = harness_error(
            f"the checker sent {len(mine)} schema-invalid messages: {first.describe()}",
            violations=[v.to_json() for _, v in mine[:20]],
        )
        outcome.run_id, outcome.frames = run.id, [first.seq]
        return [outcome]
    return [passed("every non-probe client message is schema-valid")]


def _update_kind(msg: dict[str, Any]) -> tuple[str | None, str | None]:
    params = msg.get("params")
    if not isinstance(params, dict):
        return None, None
    update = params.get("update")
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return params.get("sessionId"), kind


@requirement(
    "prompt.updates-before-response",
    Tier.MUST,
    "No turn update (message/thought chunk, tool call, plan) follows the prompt's response.",
    house(
        "a turn's updates come before its response",
        acp(
            "prompt-turn",
            "Check for completion",
            "the turn ends and the Agent MUST respond to the original session/prompt request",
        ),
    ),
    scenario=RUN_WIDE,
    house=True,
)
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
            if _is_response(msg):
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
        if _is_response(msg):
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


@requirement(
    "prompt.updates-name-known-session",
    Tier.MUST,
    "Every session/update names a session the agent handed out or one the client named in a "
    "request the agent did not reject.",
    schema_requires("SessionNotification.sessionId: the session the update pertains to")
    + "; "
    + acp("session-setup", "Session ID"),
    scenario=RUN_WIDE,
)
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


@requirement(
    "prompt.updates-after-session-handed-out",
    Tier.MUST,
    "No session/update names a new session before the response that hands out its id (a "
    "client cannot yet tell which session it belongs to).",
    house(
        "updates for a new session only after session/new (or fork) answered",
        acp("session-setup", "Session ID"),
    ),
    scenario=RUN_WIDE,
    house=True,
)
def updates_after_session_handed_out(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        ledger, suspects = _scan_sessions(run)
        for frame, session in suspects:
            if (why := _early_offence(frame, session, ledger)) is not None:
                yield frame, why

    return per_run(record, find, "messages naming a session before it was handed out")


def client_caps(run: AgentRun) -> dict[str, Any] | None:
    for frame in run.frames:
        msg = frame.message
        if frame.direction == "c2a" and isinstance(msg, dict) and msg.get("method") == "initialize":
            params = msg.get("params")
            if isinstance(params, dict):
                # v2 names them ``capabilities``; elicitation's gate reads the same in both.
                caps = params.get("clientCapabilities") or params.get("capabilities") or {}
                return {"clientCapabilities": caps}
    return None


@check("gating.no-unadvertised-client-methods", scenario=RUN_WIDE)
def no_unadvertised_client_methods(record: RunRecord) -> list[Outcome]:
    index = method_index()

    def find(run: AgentRun) -> Iterator[Offence]:
        caps = client_caps(run) or {"clientCapabilities": {}}
        for frame in _agent_frames(run):
            msg = frame.message
            if not (isinstance(msg, dict) and isinstance(msg.get("method"), str)):
                continue
            entry = index.get(msg["method"])
            gate = entry.get("capability") if entry else None
            if (
                entry
                and entry.get("side") == "client"
                and gate
                and not advertised(surface_value(caps, gate))
            ):
                yield frame, f"called {msg['method']} although {gate} was not advertised"

    return per_run(record, find, "calls to client methods that were not advertised")


def _ended_runs(record: RunRecord) -> list[AgentRun]:
    return [
        run
        for run in record.runs
        if run.exit is not None
        and not run.custom_shutdown
        and run.exit.rung is not Rung.ALREADY_EXITED
    ]


def _shutdown_outcomes(
    record: RunRecord, ok: Callable[[AgentRun], bool], what: str
) -> list[Outcome]:
    runs = _ended_runs(record)
    if not runs:
        return [not_applicable("no agent process was shut down by the checker")]
    bad = [run for run in runs if not ok(run)]
    if not bad:
        return [passed(f"{len(runs)} agent processes checked")]
    outcome = failed(
        f"{len(bad)} of {len(runs)} processes {what}: "
        + ", ".join(f"{run.id} ({run.exit.rung.value if run.exit else '?'})" for run in bad[:5]),
        exits={run.id: run.exit.to_json() for run in bad[:10] if run.exit},
    )
    outcome.run_id = bad[0].id
    return [outcome]


@requirement(
    "shutdown.exits-on-stdin-eof",
    Tier.SHOULD,
    "The agent exits on its own after stdin closes (within the step timeout).",
    house("exit when stdin closes", STDIO),
    scenario=RUN_WIDE,
    house=True,
)
def exits_on_stdin_eof(record: RunRecord) -> list[Outcome]:
    outcomes = _shutdown_outcomes(
        record,
        lambda run: run.exit is not None and run.exit.rung is Rung.STDIN_EOF,
        "did not exit after stdin closed",
    )
    shortened = [
        run.exit.eof_wait
        for run in _ended_runs(record)
        if run.exit is not None
        and run.exit.eof_wait is not None
        and run.exit.rung is not Rung.STDIN_EOF
    ]
    if shortened and outcomes[0].verdict is Verdict.FAIL:
        # The first such process had the full wait (see ScenarioRuntime.shutdown).
        outcomes[0].reason += (
            f" ({len(shortened)} of them were given {max(shortened):g} s, once an earlier "
            "process had not exited within the full wait)"
        )
    return outcomes


@requirement(
    "shutdown.no-sigkill-needed",
    Tier.MUST,
    "The agent ends after stdin EOF or SIGTERM, never needing SIGKILL.",
    house("end on stdin EOF or SIGTERM", STDIO),
    scenario=RUN_WIDE,
    house=True,
)
def no_sigkill_needed(record: RunRecord) -> list[Outcome]:
    return _shutdown_outcomes(
        record,
        lambda run: run.exit is not None and run.exit.rung in (Rung.STDIN_EOF, Rung.SIGTERM),
        "needed SIGKILL",
    )


@requirement(
    "shutdown.no-orphans",
    Tier.SHOULD,
    "No process of the agent's group outlives the agent.",
    house("no orphaned processes", STDIO),
    scenario=RUN_WIDE,
    house=True,
)
def no_orphans(record: RunRecord) -> list[Outcome]:
    return _shutdown_outcomes(
        record,
        lambda run: run.exit is not None and not run.exit.orphans,
        "left processes behind in their group",
    )
