"""Expected-failure baselines: known failures that do not fail the run, until they pass.

File format (JSON)::

    {"expectedFailures": [{"id": "session.list-bad-cursor", "reason": "upstream bug #12"}]}

A ``{"id": "reason", ...}`` mapping under ``expectedFailures`` is accepted too. Every entry
needs a reason. An entry whose requirement now passes is *stale* and fails the run, so the
baseline only ever shrinks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .config import UsageError
from .outcomes import Verdict
from .requirements import REQUIREMENTS


def parse(data: Any) -> dict[str, str]:
    entries = data.get("expectedFailures") if isinstance(data, dict) else None
    if isinstance(entries, dict):
        entries = [{"id": k, "reason": v} for k, v in entries.items()]
    if not isinstance(entries, list):
        raise UsageError("a baseline needs an 'expectedFailures' list or object")
    out: dict[str, str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise UsageError(f"baseline entry without an id: {entry!r}")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError(f"baseline entry {entry['id']!r} needs a reason")
        if entry["id"] not in REQUIREMENTS:
            raise UsageError(f"baseline names unknown requirement {entry['id']!r}")
        out[entry["id"]] = reason
    return out


def load(path: Path) -> dict[str, str]:
    try:
        return parse(json.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise UsageError(f"cannot read baseline {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"baseline {path} is not JSON: {exc.msg}") from exc


def apply(result: Any, expected: dict[str, str]) -> None:
    """Mark baselined failures as expected and baselined passes as stale (in place)."""
    for req_id, reason in expected.items():
        item = result.results.get(req_id)
        if item is None:
            continue  # not selected in this run
        item.baseline_reason = reason
        if item.verdict is Verdict.FAIL:
            item.baseline = "expected"
        elif item.verdict is Verdict.PASS:
            item.baseline = "stale"
        else:
            result.notes.append(f"baseline entry {req_id} not evaluated: {item.verdict.value}")
