"""The peers matrix: per agent and requirement area, how many requirements passed.

Input is one :class:`AgentRun` per agent — the checker's ``--report-json`` data (format
``acp-conformance-report``), or the reason there is none. :func:`build_matrix` turns the
runs into the JSON document; :func:`render_markdown` renders that document, so the two
files always say the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .agents import Peer

FORMAT = "acp-peers-matrix"
FORMAT_VERSION = 1

#: Verdicts as the report spells them, in the order a cell shows them.
PASS, FAIL, NOT_APPLICABLE, HARNESS_ERROR = "pass", "fail", "not-applicable", "harness-error"
VERDICTS = (PASS, FAIL, NOT_APPLICABLE, HARNESS_ERROR)

#: Failures of these tiers are listed first: they make the agent non-conformant.
_TIER_ORDER = {"MUST": 0, "CAPABILITY": 1, "SHOULD": 2, "INFO": 3}
DEFAULT_FAILURE_LIMIT = 8
_REASON_WIDTH = 140


@dataclass
class AgentRun:
    peer: Peer
    #: The parsed report JSON, or ``None`` when the checker produced none.
    report: Mapping[str, Any] | None
    #: Why there is no report (not installed, checker crashed, timed out, ...).
    error: str | None = None
    report_path: str | None = None


def _one_line(text: str, width: int = _REASON_WIDTH) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _empty_counts() -> dict[str, int]:
    return dict.fromkeys(VERDICTS, 0)


def area_counts(report: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """``area -> verdict -> count`` over the report's requirements."""
    areas: dict[str, dict[str, int]] = {}
    for requirement in report.get("requirements", []):
        area = requirement.get("area") or str(requirement["id"]).split(".", 1)[0]
        counts = areas.setdefault(area, _empty_counts())
        verdict = requirement.get("verdict", HARNESS_ERROR)
        counts[verdict if verdict in counts else HARNESS_ERROR] += 1
    return areas


def totals(areas: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    total = _empty_counts()
    for counts in areas.values():
        for verdict, number in counts.items():
            total[verdict] += number
    return total


def _failure_reason(requirement: Mapping[str, Any]) -> str:
    """The requirement's reason, else that of its first failing check."""
    if requirement.get("reason"):
        return str(requirement["reason"])
    for outcome in requirement.get("outcomes", []):
        if outcome.get("verdict") == FAIL and outcome.get("reason"):
            return str(outcome["reason"])
    return str(requirement.get("statement", ""))


def notable_failures(
    report: Mapping[str, Any], limit: int = DEFAULT_FAILURE_LIMIT
) -> list[dict[str, str]]:
    """Failed requirements, blocking tiers first, each with a one-line reason."""
    failed = [r for r in report.get("requirements", []) if r.get("verdict") == FAIL]
    failed.sort(key=lambda r: (_TIER_ORDER.get(r.get("tier", ""), 9), r["id"]))
    return [
        {
            "id": r["id"],
            "tier": r.get("tier", ""),
            "reason": _one_line(_failure_reason(r)),
            "reference": str(r.get("reference", "")),
        }
        for r in failed[:limit]
    ]


def _agent_entry(run: AgentRun, failure_limit: int) -> dict[str, Any]:
    peer = run.peer
    entry: dict[str, Any] = {
        "name": peer.name,
        "title": peer.title,
        "llm": peer.llm,
        "llmNote": peer.llm_note,
        "authMethod": peer.auth_method,
        "tools": peer.tools,
        "reportPath": run.report_path,
        "error": run.error,
    }
    if run.report is None:
        entry.update(areas={}, totals=_empty_counts(), notableFailures=[], failureCount=0)
        return entry
    report = run.report
    areas = area_counts(report)
    entry.update(
        agentInfo=(report.get("agent") or {}).get("info"),
        status=report.get("status"),
        verdictLine=report.get("verdictLine"),
        exitCode=report.get("exitCode"),
        durationSeconds=report.get("durationSeconds"),
        areas=areas,
        totals=totals(areas),
        notableFailures=notable_failures(report, failure_limit),
        failureCount=sum(1 for r in report.get("requirements", []) if r.get("verdict") == FAIL),
    )
    return entry


def build_matrix(
    runs: Sequence[AgentRun], failure_limit: int = DEFAULT_FAILURE_LIMIT, profile: str = "acp"
) -> dict[str, Any]:
    agents = [_agent_entry(run, failure_limit) for run in runs]
    areas = sorted({area for agent in agents for area in agent["areas"]})
    return {
        "format": FORMAT,
        "formatVersion": FORMAT_VERSION,
        "profile": profile,
        "areas": areas,
        "agents": agents,
    }


def _cell(counts: Mapping[str, int] | None) -> str:
    """``pass/fail/n.a.``, plus ``+Ne`` for harness errors; ``-`` when the area is absent."""
    if not counts or not any(counts.values()):
        return "-"
    text = f"{counts.get(PASS, 0)}/{counts.get(FAIL, 0)}/{counts.get(NOT_APPLICABLE, 0)}"
    errors = counts.get(HARNESS_ERROR, 0)
    return f"{text} +{errors}e" if errors else text


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _agents_table(matrix: Mapping[str, Any]) -> Iterable[str]:
    yield "| agent | what | LLM | auth | verdict |"
    yield "|---|---|---|---|---|"
    for agent in matrix["agents"]:
        llm = agent["llm"] + (f" ({agent['llmNote']})" if agent["llmNote"] else "")
        verdict = agent.get("verdictLine") or f"not run: {agent['error']}"
        yield (
            f"| {agent['name']} | {_escape(agent['title'])} | {_escape(llm)} | "
            f"{agent['authMethod'] or '-'} | {_escape(_one_line(verdict, 160))} |"
        )


def _counts_table(matrix: Mapping[str, Any]) -> Iterable[str]:
    areas = matrix["areas"]
    yield "| agent | " + " | ".join(areas) + " | total |"
    yield "|---|" + "---|" * len(areas) + "---|"
    for agent in matrix["agents"]:
        if agent["error"] and not agent["areas"]:
            cells = ["-"] * len(areas) + ["not run"]
        else:
            cells = [_cell(agent["areas"].get(area)) for area in areas]
            cells.append(_cell(agent["totals"]))
        yield f"| {agent['name']} | " + " | ".join(cells) + " |"


def _failures_section(matrix: Mapping[str, Any]) -> Iterable[str]:
    for agent in matrix["agents"]:
        yield f"### {agent['name']}"
        yield ""
        if agent["error"] and not agent["areas"]:
            yield f"- not run: {_one_line(agent['error'])}"
        elif not agent["notableFailures"]:
            yield "- no failures"
        else:
            for failure in agent["notableFailures"]:
                yield f"- `{failure['id']}` ({failure['tier']}): {failure['reason']}"
                if failure["tier"] in ("MUST", "CAPABILITY") and failure.get("reference"):
                    yield f"  - breaks: {failure['reference']}"
            hidden = agent["failureCount"] - len(agent["notableFailures"])
            if hidden > 0:
                yield f"- … and {hidden} more (see the report JSON)"
        yield ""


def render_markdown(matrix: Mapping[str, Any]) -> str:
    lines = [
        f"# ACP peers matrix (--profile {matrix.get('profile', 'acp')})",
        "",
        "Each cell is `pass/fail/n.a.` requirements of that area (`+Ne`: harness errors, no "
        "verdict). Agents run with `--llm none` are judged on protocol requirements only; "
        "their prompt-turn requirements are n.a.",
        "",
        "## Agents",
        "",
        *_agents_table(matrix),
        "",
        "## Requirements by area",
        "",
        *_counts_table(matrix),
        "",
        "## Notable failures",
        "",
        *_failures_section(matrix),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_matrix(
    runs: Sequence[AgentRun],
    out_dir: Path,
    failure_limit: int = DEFAULT_FAILURE_LIMIT,
    profile: str = "acp",
) -> tuple[Path, Path]:
    """Write ``peers-matrix.md`` and ``peers-matrix.json`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    matrix = build_matrix(runs, failure_limit, profile)
    markdown_path = out_dir / "peers-matrix.md"
    json_path = out_dir / "peers-matrix.json"
    markdown_path.write_text(render_markdown(matrix), encoding="utf-8")
    json_path.write_text(json.dumps(matrix, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return markdown_path, json_path
