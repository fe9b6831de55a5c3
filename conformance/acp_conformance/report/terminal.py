"""The human-readable report: one table per area, then the verdict line."""

from __future__ import annotations

import shutil
from collections.abc import Iterable

from ..requirements import Requirement
from ..runner import RequirementResult, RunResult

_LABEL = {
    "pass": "pass",
    "fail": "FAIL",
    "not-applicable": "n/a",
    "harness-error": "HARNESS",
}


def _label(result: RequirementResult) -> str:
    if result.baseline == "expected":
        return "xfail"
    if result.baseline == "stale":
        return "STALE"
    return _LABEL[result.verdict.value]


def _shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def render(result: RunResult, *, width: int | None = None) -> str:
    width = width or shutil.get_terminal_size((120, 40)).columns
    lines: list[str] = []
    agent = result.agent_info or {}
    lines.append(
        f"acp-conformance: {' '.join(result.config.argv)}"
        + (f"  [{agent.get('name')} {agent.get('version', '')}]" if agent else "")
    )
    lines.append(f"profile {result.config.profile}, tools {result.config.tools}")
    if result.aborted is not None:
        lines += _aborted(result)
    areas: dict[str, list[RequirementResult]] = {}
    for item in result.results.values():
        areas.setdefault(item.requirement.area, []).append(item)
    id_width = max((len(r) for r in result.results), default=10)
    for area, items in areas.items():
        lines.append("")
        lines.append(f"{area}")
        for item in items:
            reason = item.baseline_reason if item.baseline == "expected" else item.reason
            req = item.requirement
            head = f"  {req.id:<{id_width}}  {req.tier.value:<10}  {_label(item):<7}  "
            lines.append(head + _shorten(reason or "", max(width - len(head), 20)))
    lines.append("")
    if result.aborted is None or result.results:
        lines.append(summary_line(result.results.values()))
    lines.append(result.verdict_line())
    return "\n".join(lines)


def _aborted(result: RunResult) -> list[str]:
    """What stopped the run before any scenario: the reason and the agent's stderr tail."""
    assert result.aborted is not None
    lines = ["", f"stopped after the preflight initialize: {result.aborted.outcome.reason}"]
    stderr = str(result.aborted.outcome.evidence.get("stderr") or "").strip()
    if stderr:
        lines.append("agent stderr (last lines):")
        lines += [f"  | {line}" for line in stderr.splitlines()]
    else:
        lines.append("agent stderr: (empty)")
    return lines


def summary_line(items: Iterable[RequirementResult]) -> str:
    counts: dict[str, int] = {}
    for item in items:
        key = _label(item)
        counts[key] = counts.get(key, 0) + 1
    order = ["pass", "FAIL", "xfail", "STALE", "n/a", "HARNESS"]
    return ", ".join(f"{counts[k]} {k}" for k in order if k in counts) or "no requirements selected"


def render_requirements(requirements: Iterable[Requirement]) -> str:
    reqs = list(requirements)
    id_width = max((len(r.id) for r in reqs), default=10)
    lines = [f"{'id':<{id_width}}  {'tier':<10}  {'gate / needs':<40}  statement  [reference]"]
    for req in reqs:
        gate = req.gate or ""
        if req.llm:
            gate = (gate + " " if gate else "") + "(scripted LLM)"
        lines.append(
            f"{req.id:<{id_width}}  {req.tier.value:<10}  {gate:<40}  "
            f"{req.statement}  [{req.reference}]"
        )
    return "\n".join(lines)
