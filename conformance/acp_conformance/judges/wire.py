"""Run-wide checks: the framing and the JSON-RPC envelope every recorded frame obeys, and
the ids that pair responses with requests.

These are pure functions over the recordings, so they judge all the traffic the scenarios
produced, including traffic no scenario specifically looked at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ..harness.agent_client import id_key, id_text
from ..harness.process import Rung
from ..harness.recorder import Frame
from ..outcomes import (
    Outcome,
)
from ..requirements import RUN_WIDE, check
from ..scenarios.check_context import AgentRun, RunRecord
from ..versions import negotiated_version
from .run_walk import Offence, agent_frames, per_run


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_batch(message: Any) -> bool:
    return (
        isinstance(message, list)
        and bool(message)
        and all(isinstance(item, dict) for item in message)
    )


@check("transport.stdout-only-json", scenario=RUN_WIDE)
def stdout_only_json(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        # The v2 draft allows a batch: a non-empty array of message objects on one line.
        batches = negotiated_version(run) >= 2
        for frame in agent_frames(run):
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


@check("transport.newline-terminated", scenario=RUN_WIDE)
def newline_terminated(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in agent_frames(run):
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


@check("transport.utf8", scenario=RUN_WIDE)
def utf8(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in agent_frames(run):
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


@check("jsonrpc.envelope-valid", scenario=RUN_WIDE)
def envelope_valid(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in agent_frames(run):
            if isinstance(frame.message, dict) and (why := envelope_problem(frame.message)):
                yield frame, why

    return per_run(record, find, "malformed envelopes")


def is_response(msg: Any) -> bool:
    return isinstance(msg, dict) and "method" not in msg and "id" in msg


@check("jsonrpc.response-exclusive", scenario=RUN_WIDE)
def response_exclusive(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in agent_frames(run):
            msg = frame.message
            if is_response(msg) and ("result" in msg) == ("error" in msg):
                yield frame, "has both result and error" if "result" in msg else "has neither"

    return per_run(record, find, "responses without exactly one of result/error")


@check("jsonrpc.error-shape", scenario=RUN_WIDE)
def error_shape(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in agent_frames(run):
            msg = frame.message
            if not (is_response(msg) and "error" in msg):
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


@check("jsonrpc.one-response-per-request", scenario=RUN_WIDE)
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
            if not is_response(msg):
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
