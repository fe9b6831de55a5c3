"""Offline validation of a recorded session (``acp-conformance validate FILE.jsonl``).

Each line is one JSON-RPC message, optionally wrapped as ``{"dir": "c2a"|"a2c", "msg": {...}}``.
Unwrapped messages get their direction from the index (who handles the method), and
responses the direction opposite to the request whose id they answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .config import UsageError
from .harness.connection import id_key
from .harness.recorder import Direction, Frame
from .scenarios.wire import envelope_problem
from .validation import load_backend, method_index, validate_frames


def _direction(
    msg: Any, index: dict[str, dict[str, Any]], open_ids: dict[Direction, set[str]]
) -> Direction:
    if isinstance(msg, dict) and isinstance(msg.get("method"), str):
        side = (index.get(msg["method"]) or {}).get("side")
        direction: Direction = "a2c" if side == "client" else "c2a"
        if "id" in msg:
            open_ids[direction].add(id_key(msg["id"]))
        return direction
    if isinstance(msg, dict) and "id" in msg:
        key = id_key(msg["id"])
        if key in open_ids["c2a"]:
            open_ids["c2a"].discard(key)
            return "a2c"
        if key in open_ids["a2c"]:
            open_ids["a2c"].discard(key)
            return "c2a"
    return "a2c"


def load_frames(path: Path) -> list[Frame]:
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    index = method_index()
    open_ids: dict[Direction, set[str]] = {"c2a": set(), "a2c": set()}
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
                open_ids[direction].add(id_key(msg["id"]))
        else:
            msg = value
            direction = _direction(msg, index, open_ids)
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


def validate_transcript_file(path: Path) -> tuple[str, bool]:
    """A printable report and whether the transcript is free of problems."""
    frames = load_frames(path)
    problems: list[str] = []
    for frame in frames:
        if not frame.is_json:
            problems.append(f"#{frame.seq}: {frame.decode_error}")
        elif not isinstance(frame.message, dict):
            problems.append(f"#{frame.seq} {frame.direction}: not a JSON object")
        elif why := envelope_problem(frame.message):
            problems.append(f"#{frame.seq} {frame.direction} envelope: {why}")
    for violation in validate_frames(frames, load_backend()):
        problems.append(violation.describe())
    head = f"{path}: {len(frames)} messages, {len(problems)} problems"
    return "\n".join([head, *problems]), not problems
