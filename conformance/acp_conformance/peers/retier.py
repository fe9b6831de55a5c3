"""A checker report re-judged under another rule profile, without running the agent again.

A rule profile changes only the tier of house rules (``requirements.effective``), never what
a check sends or concludes, so one run's verdicts hold under every profile: only which
failures block, and therefore the status and the verdict line, change.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..catalogue import REQUIREMENTS
from ..requirements import Tier, effective

_BLOCKING = (Tier.MUST.value, Tier.CAPABILITY.value)


def _counted(report: Mapping[str, Any], verdict: str) -> list[Mapping[str, Any]]:
    return [
        r
        for r in report.get("requirements", [])
        if r.get("verdict") == verdict and r.get("baseline") != "expected"
    ]


def _verdict_line(report: Mapping[str, Any], status: str) -> str:
    """The same wording as ``RunResult.verdict_line`` (without baselines)."""
    failures = _counted(report, "fail")
    must = sum(1 for r in failures if r["tier"] == Tier.MUST.value)
    gated = sum(1 for r in failures if r["tier"] == Tier.CAPABILITY.value)
    should = sum(1 for r in failures if r["tier"] not in _BLOCKING)
    harness = len(_counted(report, "harness-error"))
    parts = []
    if must:
        parts.append(f"{must} MUST failure{'s' * (must != 1)}")
    if gated:
        parts.append(f"{gated} capability failure{'s' * (gated != 1)}")
    extra = []
    if should:
        extra.append(f"{should} SHOULD/INFO failures")
    if harness:
        extra.append(f"{harness} harness errors")
    tail = f" ({', '.join(extra)})" if extra else ""
    done, applicable = _coverage(report)
    exercised = f" — {done} of {applicable} MUST/CAPABILITY exercised" if applicable else ""
    if status == "not-conformant":
        return "NOT CONFORMANT: " + ", ".join(parts) + tail + exercised
    if status == "inconclusive":
        return "INCONCLUSIVE: " + ", ".join(extra) + exercised
    return "CONFORMANT" + tail + exercised


def _coverage(report: Mapping[str, Any]) -> tuple[int, int]:
    """(exercised, applicable) MUST/CAPABILITY requirements, as ``RunResult.coverage`` counts
    them; (0, 0) for a report written before the checker counted coverage."""
    if "coverage" not in report:
        return 0, 0
    done = applicable = 0
    for entry in report.get("requirements", []):
        outcomes = entry.get("outcomes") or []
        req = REQUIREMENTS.get(entry.get("id", ""))
        softened = req is not None and req.blocking and not req.house and _softened(entry)
        if entry.get("tier") not in _BLOCKING and not softened:
            continue
        if (
            entry.get("verdict") == "not-applicable"
            and outcomes
            and all(o.get("outOfScope") for o in outcomes)
        ):
            continue
        applicable += 1
        done += entry.get("verdict") in ("pass", "fail")
    return done, applicable


def _softened(entry: Mapping[str, Any]) -> bool:
    """Whether every failure of the entry was judged as SHOULD by its check (a late answer,
    a turn of the agent's own model): no profile makes those block."""
    failures = [o for o in entry.get("outcomes", []) if o.get("verdict") == "fail"]
    return bool(failures) and all(o.get("judgedAsShould") for o in failures)


def under_profile(report: Mapping[str, Any], profile: str) -> dict[str, Any]:
    """``report`` with tiers, status, verdict line and exit code as ``profile`` judges them."""
    out = copy.deepcopy(dict(report))
    if out.get("aborted"):
        return out  # stopped by the preflight: one verdict, the same under every profile
    for entry in out.get("requirements", []):
        req = REQUIREMENTS.get(entry.get("id", ""))
        if req is not None and (req.house or not _softened(entry)):
            entry["tier"] = effective(req, profile).tier.value
    blocking = [r for r in _counted(out, "fail") if r["tier"] in _BLOCKING]
    stale = [r for r in out.get("requirements", []) if r.get("baseline") == "stale"]
    if blocking or stale:
        status = "not-conformant"
    elif _counted(out, "harness-error"):
        status = "inconclusive"
    else:
        status = "conformant"
    out["status"] = status
    out["exitCode"] = {"conformant": 0, "not-conformant": 1, "inconclusive": 3}[status]
    out["verdictLine"] = _verdict_line(out, status)
    out.setdefault("options", {})["profile"] = profile
    out["rejudgedFrom"] = report.get("options", {}).get("profile")
    return out
