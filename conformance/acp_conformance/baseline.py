"""Expected-failure baselines: known failures that do not fail the run, until they pass.

File format (JSON)::

    {"expectedFailures": [{"id": "session.list-bad-cursor", "reason": "upstream bug #12"}]}

A ``{"id": "reason", ...}`` mapping under ``expectedFailures`` is accepted too. Every entry
needs a reason. An entry whose requirement now passes is *stale* and fails the run, so the
baseline only ever shrinks.

``acp-conformance run --write-baseline FILE`` writes the run's failures in this format, each
with :data:`PLACEHOLDER_REASON`; a baseline still carrying the placeholder is refused, so
every expected failure ends up with a reason a maintainer wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .catalogue import REQUIREMENTS
from .config import UsageError
from .outcomes import Verdict

#: The reason ``--write-baseline`` gives every entry; it must be replaced before use.
PLACEHOLDER_REASON = "TODO: say why this failure is expected (and link the issue)"


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
        if reason.strip() == PLACEHOLDER_REASON:
            raise UsageError(
                f"baseline entry {entry['id']!r} still has the placeholder reason; "
                "write down why the failure is expected"
            )
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


def failures_of(result: Any, previous: dict[str, str] | None = None) -> dict[str, str]:
    """The failing requirements of ``result`` (including baselined ones, which still fail),
    each with its reason from ``previous`` when it had one, else the placeholder."""
    previous = previous or {}
    return {
        req_id: previous.get(req_id, PLACEHOLDER_REASON)
        for req_id, item in result.results.items()
        if item.verdict is Verdict.FAIL
    }


def render(entries: dict[str, str]) -> str:
    """A baseline file (the list form) for ``entries``, in requirement order."""
    order = list(REQUIREMENTS)
    listed = [
        {"id": req_id, "reason": entries[req_id]}
        for req_id in sorted(entries, key=lambda r: order.index(r) if r in order else len(order))
    ]
    return json.dumps({"expectedFailures": listed}, indent=2, ensure_ascii=False) + "\n"


def write(path: Path, entries: dict[str, str]) -> None:
    try:
        path.write_text(render(entries), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write baseline {path}: {exc.strerror}") from exc
