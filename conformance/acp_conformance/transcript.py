"""Offline validation of a recorded session (``acp-conformance validate FILE.jsonl``).

Each line is one JSON-RPC message, optionally wrapped as ``{"dir": "c2a"|"a2c", "msg": {...}}``.
Unwrapped messages get their direction from the index (who handles the method), and
responses the direction opposite to the request whose id they answer. Each side numbers its
own requests, so the same id may be open in both directions at once (a client's prompt and
the agent's permission request, say); such a response is matched to the request whose result
schema it fits, else to the later request (the inner exchange ends first).

Per-code error ``data`` shapes are this project's conventions, not ACP's, so a transcript of
another agent is not failed for them; they are listed as notes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .config import UsageError
from .harness.agent_client import id_key
from .harness.recorder import Direction, Frame
from .judges.wire import envelope_problem
from .validation import load_backend, method_index, validate_frames

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


def load_frames(path: Path) -> list[Frame]:
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    index = method_index()
    backend = load_backend()
    open_ids: OpenIds = {"c2a": {}, "a2c": {}}
    frames: list[Frame] = []
    for raw in lines:
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            frames.append(Frame(len(frames), 0.0, "a2c", raw, decode_error=f"invalid JSON: {exc}"))
            continue
        direction: Direction
        if isinstance(value, dict) and set(value) <= {"dir", "msg", "t"} and "msg" in value:
            msg = value["msg"]
            direction = "c2a" if value.get("dir") == "c2a" else "a2c"
            if isinstance(msg, dict) and "method" in msg and "id" in msg:
                open_ids[direction][id_key(msg["id"])] = (str(msg["method"]), len(frames))
        else:
            msg = value
            direction = _direction(msg, index, open_ids, len(frames), backend)
        encoded = json.dumps(msg, ensure_ascii=False).encode()
        frames.append(
            Frame(
                len(frames),
                float(value.get("t", 0.0)) if isinstance(value, dict) and "msg" in value else 0.0,
                direction,
                encoded,
                msg,
            )
        )
    return frames


def _refuse_a_report(path: Path) -> None:
    """One clear usage error when ``path`` holds a report this checker wrote (``run
    --report-json``, ``proxy --report-json``): a single JSON document over many lines,
    which read as a transcript would give an "invalid JSON" problem per line."""
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return  # unreadable or not one JSON document: load_frames says what it is
    if not isinstance(document, dict):
        return
    kind = document.get("format")
    if isinstance(kind, str) and kind.startswith("acp-conformance"):
        raise UsageError(
            f"{path}: this is an acp-conformance report ({kind}), not a transcript;"
            " validate reads a JSONL transcript, one JSON-RPC message per line"
        )


def validate_transcript_file(path: Path) -> tuple[str, bool]:
    """A printable report and whether the transcript is free of problems."""
    _refuse_a_report(path)
    frames = load_frames(path)
    problems: list[str] = []
    for frame in frames:
        if not frame.is_json:
            problems.append(f"#{frame.seq}: {frame.decode_error}")
        elif not isinstance(frame.message, dict):
            problems.append(f"#{frame.seq} {frame.direction}: not a JSON object")
        elif why := envelope_problem(frame.message):
            problems.append(f"#{frame.seq} {frame.direction} envelope: {why}")
    notes: list[str] = []
    for violation in validate_frames(frames, load_backend()):
        target = notes if violation.part == "error-data" else problems
        target.append(violation.describe())
    head = f"{path}: {len(frames)} messages, {len(problems)} problems"
    if notes:
        head += f" ({len(notes)} notes: error data outside this project's conventions)"
    lines = [head, *problems, *(f"note: {n}" for n in notes)]
    return "\n".join(lines), not problems
