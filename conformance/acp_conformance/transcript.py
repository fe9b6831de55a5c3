"""Offline validation of a recorded session (``acp-conformance validate FILE.jsonl``).

Each line is one JSON-RPC message, optionally wrapped as ``{"dir": "c2a"|"a2c", "msg": {...}}``.
Unwrapped messages get their direction from the index (who handles the method), and
responses the direction opposite to the request whose id they answer. Each side numbers its
own requests, so the same id may be open in both directions at once (a client's prompt and
the agent's permission request, say); such a response is matched to the request whose result
schema it fits, else to the later request (the inner exchange ends first).

A transcript is graded as the protocol version its ``initialize`` answer negotiated (v1 when
there is none); a v2 one as the draft ``--v2-draft`` names (default the newest), and the
report's first line says which draft that was.

Per-code error ``data`` shapes are this project's conventions, not ACP's, so a transcript of
another agent is not failed for them; they are listed as notes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .config import UsageError
from .harness.agent_client import id_key
from .harness.limits import Line, LineSplitter, oversized_reason
from .harness.recorder import Direction, Frame, parse_line
from .judges.wire import envelope_problem
from .v2_drafts import NEWEST
from .validation import TranscriptValidator, load_backend, method_index
from .versions import DEFAULT_VERSION, V2, VersionedBackend, method_index_for

READ_CHUNK = 64 * 1024

#: Open requests per direction: id key → (method, position in the transcript).
OpenIds = dict[Direction, dict[str, tuple[str, int]]]


def _fits(backend: Any, method: str, msg: dict[str, Any]) -> bool:
    if "result" not in msg:
        return True  # an error fits any request
    try:
        return not backend.validate_result(method, msg["result"])
    except Exception:  # a method the schemas do not know fits nothing in particular
        return False


def _answered_side(msg: dict[str, Any], open_ids: OpenIds, backend: Any) -> Direction | None:
    """Which side's request ``msg`` answers (the direction that request was sent in)."""
    key = id_key(msg["id"])
    sides: tuple[Direction, ...] = ("c2a", "a2c")
    candidates = [d for d in sides if key in open_ids[d]]
    if len(candidates) > 1:
        fitting = [d for d in candidates if _fits(backend, open_ids[d][key][0], msg)]
        if len(fitting) == 1:
            candidates = fitting
        else:
            candidates.sort(key=lambda d: open_ids[d][key][1], reverse=True)
    if not candidates:
        return None
    side: Direction = candidates[0]
    del open_ids[side][key]
    return side


def _direction(
    msg: Any, index: dict[str, dict[str, Any]], open_ids: OpenIds, position: int, backend: Any
) -> Direction:
    if isinstance(msg, dict) and isinstance(msg.get("method"), str):
        side = (index.get(msg["method"]) or {}).get("side")
        direction: Direction = "a2c" if side == "client" else "c2a"
        if "id" in msg:
            open_ids[direction][id_key(msg["id"])] = (msg["method"], position)
        return direction
    if isinstance(msg, dict) and "id" in msg:
        asked = _answered_side(msg, open_ids, backend)
        if asked is not None:
            return "a2c" if asked == "c2a" else "c2a"
    return "a2c"


def iter_frames(
    path: Path,
    index: dict[str, dict[str, Any]] | None = None,
    backend: Any = None,
) -> Iterator[Frame]:
    """The transcript's messages one at a time, read in chunks: a line over the checker's
    line cap is a problem of its own (only its head is kept), and nothing but the current
    line is held, whatever the file's size."""
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    index = method_index() if index is None else index
    backend = load_backend() if backend is None else backend
    open_ids: OpenIds = {"c2a": {}, "a2c": {}}
    seq = 0
    splitter = LineSplitter()
    with stream:
        while True:
            try:
                chunk = stream.read(READ_CHUNK)
            except OSError as exc:
                raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
            lines = (
                splitter.feed(chunk) if chunk else [last for last in [splitter.finish()] if last]
            )
            for line in lines:
                if line.oversized or line.data.strip():
                    yield _frame(seq, line, index, open_ids, backend)
                    seq += 1
            if not chunk:
                return


def _frame(seq: int, line: Line, index: Any, open_ids: OpenIds, backend: Any) -> Frame:
    if line.oversized:
        why = oversized_reason(line.size, finished=line.terminated)
        return Frame(seq, 0.0, "a2c", line.data, decode_error=why, oversized=line.size)
    value, error = parse_line(line.data)
    if error is not None:
        return Frame(seq, 0.0, "a2c", line.data, decode_error=error)
    direction: Direction
    if isinstance(value, dict) and set(value) <= {"dir", "msg", "t"} and "msg" in value:
        msg = value["msg"]
        direction = "c2a" if value.get("dir") == "c2a" else "a2c"
        if isinstance(msg, dict) and "method" in msg and "id" in msg:
            open_ids[direction][id_key(msg["id"])] = (str(msg["method"]), seq)
    else:
        msg = value
        direction = _direction(msg, index, open_ids, seq, backend)
    t = value.get("t", 0.0) if isinstance(value, dict) and "msg" in value else 0.0
    return Frame(seq, float(t) if isinstance(t, int | float) else 0.0, direction, line.data, msg)


def _refuse_a_report(path: Path) -> None:
    """One clear usage error when ``path`` holds a report this checker wrote (``run
    --report-json``, ``proxy --report-json``): a single JSON document over many lines,
    which read as a transcript would give an "invalid JSON" problem per line. Only the
    file's head is read (a report starts with its ``format`` key), so a huge transcript
    still streams in bounded memory."""
    try:
        with path.open("rb") as stream:
            head = stream.read(REPORT_HEAD_BYTES)
    except OSError:
        return  # iter_frames says what is wrong with it
    match = REPORT_HEAD.match(head)
    if match is not None:
        kind = match.group(1).decode("ascii")
        raise UsageError(
            f"{path}: this is an acp-conformance report ({kind}), not a transcript;"
            " validate reads a JSONL transcript, one JSON-RPC message per line"
        )


#: How much of a file is read to tell a report from a transcript.
REPORT_HEAD_BYTES = 4096
#: The start of a report: its first key names the format (``acp-conformance-report``, ...).
REPORT_HEAD = re.compile(rb'\s*\{\s*"format"\s*:\s*"(acp-conformance[A-Za-z0-9._-]*)"')


#: How many messages the search for the ``initialize`` answer reads before it gives up (v1).
VERSION_SCAN = 1000


def negotiated_version(path: Path) -> int:
    """The ``protocolVersion`` the agent answered to the transcript's first ``initialize``
    (read from the start of the file), 1 when there is none in the first `VERSION_SCAN`."""
    asked: set[str] = set()
    for frame in iter_frames(path):
        if frame.seq >= VERSION_SCAN:
            break
        msg = frame.message
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        if msg.get("method") == "initialize":
            asked.add(id_key(msg["id"]))
        elif "method" not in msg and id_key(msg["id"]) in asked:
            result = msg.get("result")
            answered = result.get("protocolVersion") if isinstance(result, dict) else None
            if isinstance(answered, int) and not isinstance(answered, bool) and answered == V2:
                return V2
            if "result" in msg:
                return DEFAULT_VERSION
    return DEFAULT_VERSION


def validate_transcript_file(path: Path, v2_draft: str = NEWEST) -> tuple[str, bool]:
    """A printable report and whether the transcript is free of problems. The messages are
    judged as they are read; at most `LISTED` problems and notes are listed (all counted)."""
    _refuse_a_report(path)
    problems = Listing()
    notes = Listing()
    version = negotiated_version(path)
    if version == V2:
        backend: Any = VersionedBackend(V2, v2_draft)
        index = method_index_for(V2)
    else:
        backend, index = load_backend(), method_index()
    validator = TranscriptValidator(backend, index)
    count = 0
    for frame in iter_frames(path, index, backend):
        count += 1
        if not frame.is_json:
            problems.add(f"#{frame.seq}: {frame.decode_error}")
        elif not isinstance(frame.message, dict):
            problems.add(f"#{frame.seq} {frame.direction}: not a JSON object")
        elif why := envelope_problem(frame.message):
            problems.add(f"#{frame.seq} {frame.direction} envelope: {why}")
        violation = validator.validate(frame)
        if violation is not None:
            target = notes if violation.part == "error-data" else problems
            target.add(violation.describe())
    graded = f"v2 draft {v2_draft}" if version == V2 else "v1"
    head = f"{path}: {count} messages, {problems.count} problems (graded as {graded})"
    if notes.count:
        head += f" ({notes.count} notes: error data outside this project's conventions)"
    lines = [head, *problems.shown(), *(f"note: {n}" for n in notes.shown())]
    return "\n".join(lines), not problems.count


#: Problems (and notes) listed in a report; the rest are counted.
LISTED = 1000


class Listing:
    """The first `LISTED` lines of a kind, and how many there were."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def add(self, line: str) -> None:
        self.count += 1
        if len(self.lines) < LISTED:
            self.lines.append(line)

    def shown(self) -> list[str]:
        more = self.count - len(self.lines)
        return [*self.lines, *([f"... and {more} more"] if more else [])]
