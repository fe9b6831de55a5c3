"""The interop picture: one self-contained HTML page next to the peers matrix JSON.

Two tables — agents by requirement area, then clients by requirement area — with one
coloured cell per area whose verdict is summarised from the requirements in it, and each
cell that holds failures linking to their details further down (requirement id, tier,
reason, evidence excerpt). No external assets: the styles are inline, and everything that
came from an agent, a client or a report is escaped, since a reason may quote agent output.

Client results arrive as plain rows ``{client, requirement, verdict, reason}`` (files written
by ``acp-conformance client`` or by hand); see :func:`load_client_rows`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from .matrix import FAIL, HARNESS_ERROR, NOT_APPLICABLE, PASS, AgentRun

#: Cell verdicts, as CSS classes and legend order.
CELL_PASS, CELL_FAIL, CELL_PARTIAL, CELL_NA, CELL_NOT_RUN = (
    "pass",
    "fail",
    "partial",
    "n-a",
    "not-run",
)
_CELL_LABEL = {
    CELL_PASS: "pass",
    CELL_FAIL: "fail",
    CELL_PARTIAL: "partial",
    CELL_NA: "n/a",
    CELL_NOT_RUN: "not run",
}
#: A failure of these tiers makes the area ``fail``; others only make it ``partial``.
_BLOCKING_TIERS = ("MUST", "CAPABILITY")
_TIER_ORDER = {"MUST": 0, "CAPABILITY": 1, "SHOULD": 2, "INFO": 3}
#: Bounds on what one failure shows, so a chatty agent cannot make the page huge.
EVIDENCE_LIMIT = 1500
FRAMES_SHOWN = 6
FRAME_LIMIT = 300
REASON_LIMIT = 2000

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.3em}h2{font-size:1.15em;margin-top:1.5em}h3{font-size:1em}
table.grid{border-collapse:collapse}
.grid td,.grid th{border:1px solid #ccc;padding:.3em .6em;text-align:center}
.grid th.row{text-align:left;font-weight:normal}
td.pass{background:#cdeccd}td.fail{background:#f4b9b9}td.partial{background:#f7e3a6}
td.n-a{background:#eee;color:#777}td.not-run{background:#fff;color:#999}
td a{color:inherit}.legend span{padding:.1em .5em;margin-right:.4em;border:1px solid #ccc}
.legend .pass{background:#cdeccd}.legend .fail{background:#f4b9b9}
.legend .partial{background:#f7e3a6}.legend .n-a{background:#eee}
.failure{border-left:4px solid #c33;padding:.2em .8em;margin:.6em 0}
.failure.soft{border-color:#d9a400}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;max-height:20em;font-size:12px;
white-space:pre-wrap}code{font-size:12px}
"""


@dataclass
class Subject:
    """One row of a table: an agent or a client, with its requirements as report dicts."""

    name: str
    requirements: list[Mapping[str, Any]] = field(default_factory=list)
    #: Why there is nothing to show (not installed, checker crashed, ...), else ``None``.
    error: str | None = None
    note: str = ""


def _area(requirement: Mapping[str, Any]) -> str:
    return str(requirement.get("area") or str(requirement.get("id", "?")).split(".", 1)[0])


def cell_verdict(requirements: Sequence[Mapping[str, Any]]) -> str:
    """One colour for an area: ``fail`` on a blocking failure; ``partial`` on a non-blocking
    failure or a check that gave no verdict; ``pass`` when something passed; else ``n-a``."""
    verdicts = [r.get("verdict") for r in requirements]
    if any(r.get("verdict") == FAIL and r.get("tier") in _BLOCKING_TIERS for r in requirements):
        return CELL_FAIL
    if FAIL in verdicts or HARNESS_ERROR in verdicts:
        return CELL_PARTIAL
    if PASS in verdicts:
        return CELL_PASS
    return CELL_NA


def _needs_details(requirement: Mapping[str, Any]) -> bool:
    return requirement.get("verdict") in (FAIL, HARNESS_ERROR)


def _anchor(table: str, row: int, subject: str, area: str) -> str:
    """A fragment id: readable parts made id-safe, and the row number to keep it unique
    when two names differ only in characters the id cannot hold."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{subject}--{area}")
    return f"{table}-{row}-{safe}"


def _counts(requirements: Sequence[Mapping[str, Any]]) -> str:
    def count(verdict: str) -> int:
        return sum(1 for r in requirements if r.get("verdict") == verdict)

    text = f"{count(PASS)}/{count(FAIL)}/{count(NOT_APPLICABLE)}"
    errors = count(HARNESS_ERROR)
    return f"{text} +{errors}e" if errors else text


def _by_area(subject: Subject) -> dict[str, list[Mapping[str, Any]]]:
    areas: dict[str, list[Mapping[str, Any]]] = {}
    for requirement in subject.requirements:
        areas.setdefault(_area(requirement), []).append(requirement)
    return areas


def _grid(table: str, subjects: Sequence[Subject], first_header: str) -> str:
    areas = sorted({_area(r) for s in subjects for r in s.requirements})
    head = "".join(f"<th>{escape(a)}</th>" for a in areas)
    rows = []
    for row, subject in enumerate(subjects):
        grouped = _by_area(subject)
        cells = []
        for area in areas:
            requirements = grouped.get(area, [])
            if subject.error is not None and not subject.requirements:
                cells.append(f'<td class="{CELL_NOT_RUN}">not run</td>')
                continue
            if not requirements:
                cells.append(f'<td class="{CELL_NA}">-</td>')
                continue
            verdict = cell_verdict(requirements)
            text = f"{escape(_CELL_LABEL[verdict])} {escape(_counts(requirements))}"
            if any(_needs_details(r) for r in requirements):
                anchor = _anchor(table, row, subject.name, area)
                text = f'<a href="#{escape(anchor)}">{text}</a>'
            cells.append(f'<td class="{verdict}">{text}</td>')
        cells.append(_overall(table, row, subject))
        title = f' title="{escape(subject.note)}"' if subject.note else ""
        rows.append(f'<tr><th class="row"{title}>{escape(subject.name)}</th>{"".join(cells)}</tr>')
    return (
        f'<table class="grid" id="{escape(table)}-table"><thead><tr>'
        f"<th>{escape(first_header)}</th>{head}<th>overall</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _overall(table: str, row: int, subject: Subject) -> str:
    """The row's overall cell; with failures, a link to the details of the first area that
    holds a blocking one (else of the first area with any)."""
    if subject.error is not None and not subject.requirements:
        return f'<td class="{CELL_NOT_RUN}">not run: {escape(_clip(subject.error, 80))}</td>'
    verdict = cell_verdict(subject.requirements)
    text = escape(f"{_CELL_LABEL[verdict]} {_counts(subject.requirements)}")
    areas = [
        (area, requirements)
        for area, requirements in sorted(_by_area(subject).items())
        if any(_needs_details(r) for r in requirements)
    ]
    if areas:
        blocking = [
            area
            for area, requirements in areas
            if any(_needs_details(r) and r.get("tier") in _BLOCKING_TIERS for r in requirements)
        ]
        first = blocking[0] if blocking else areas[0][0]
        text = f'<a href="#{escape(_anchor(table, row, subject.name, first))}">{text}</a>'
    return f'<td class="{verdict}">{text}</td>'


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reason(requirement: Mapping[str, Any]) -> str:
    """The requirement's reason, else that of its first failing check."""
    if requirement.get("reason"):
        return str(requirement["reason"])
    for outcome in requirement.get("outcomes") or []:
        if outcome.get("verdict") in (FAIL, HARNESS_ERROR) and outcome.get("reason"):
            return str(outcome["reason"])
    return str(requirement.get("statement", ""))


def evidence_excerpt(requirement: Mapping[str, Any]) -> str:
    """What the failing checks recorded: their evidence, then a few transcript frames."""
    parts: list[str] = []
    for outcome in requirement.get("outcomes") or []:
        if outcome.get("verdict") not in (FAIL, HARNESS_ERROR):
            continue
        head = f"{outcome.get('check', '?')}: {outcome.get('reason', '')}"
        parts.append(head)
        if outcome.get("evidence"):
            dumped = json.dumps(outcome["evidence"], default=str, indent=1, ensure_ascii=False)
            parts.append(_clip(dumped, EVIDENCE_LIMIT))
        transcript = outcome.get("transcript") or {}
        for frame in (transcript.get("frames") or [])[:FRAMES_SHOWN]:
            line = _clip(str(frame.get("line", "")), FRAME_LIMIT)
            parts.append(f"#{frame.get('seq', '?')} {frame.get('dir', '?')} {line}")
    return "\n".join(parts)


def _failure_block(requirement: Mapping[str, Any]) -> str:
    tier = str(requirement.get("tier", ""))
    soft = "" if tier in _BLOCKING_TIERS else " soft"
    evidence = evidence_excerpt(requirement)
    reference = str(requirement.get("reference") or "")
    return (
        f'<div class="failure{soft}"><p><code>{escape(str(requirement.get("id", "?")))}</code>'
        f" · {escape(tier or '?')} · {escape(str(requirement.get('verdict', '?')))}</p>"
        f"<p>{escape(_clip(_reason(requirement), REASON_LIMIT))}</p>"
        + (f"<p><small>{escape(reference)}</small></p>" if reference else "")
        + (f"<pre>{escape(evidence)}</pre>" if evidence else "")
        + "</div>"
    )


def _details(table: str, subjects: Sequence[Subject]) -> Iterable[str]:
    for row, subject in enumerate(subjects):
        if subject.error is not None and not subject.requirements:
            yield f"<h3>{escape(subject.name)}</h3><p>not run: {escape(subject.error)}</p>"
            continue
        for area, requirements in sorted(_by_area(subject).items()):
            failed = [r for r in requirements if _needs_details(r)]
            if not failed:
                continue
            failed.sort(key=lambda r: (_TIER_ORDER.get(str(r.get("tier", "")), 9), r.get("id")))
            anchor = _anchor(table, row, subject.name, area)
            yield (
                f'<h3 id="{escape(anchor)}">{escape(subject.name)} · {escape(area)}</h3>'
                + "".join(_failure_block(r) for r in failed)
            )


def agent_subjects(runs: Sequence[AgentRun]) -> list[Subject]:
    subjects = []
    for run in runs:
        report = run.report or {}
        verdict = str(report.get("verdictLine") or "")
        subjects.append(
            Subject(
                name=run.peer.name,
                requirements=list(report.get("requirements") or []),
                error=run.error if run.report is None else None,
                note=f"{run.peer.title} — {verdict}" if verdict else run.peer.title,
            )
        )
    return subjects


def client_subjects(rows: Iterable[Mapping[str, Any]]) -> list[Subject]:
    """Group ``{client, requirement, verdict, reason}`` rows into one subject per client."""
    subjects: dict[str, Subject] = {}
    for row in rows:
        name = str(row.get("client", "?"))
        subject = subjects.setdefault(name, Subject(name))
        requirement_id = row.get("requirement") or row.get("requirementId") or row.get("id")
        if requirement_id is None:
            # A client that produced no verdicts at all: only its reason is known.
            subject.error = str(row.get("reason") or "no results")
            continue
        requirement = {**row, "id": str(requirement_id)}
        requirement.setdefault("area", _client_area(str(requirement_id)))
        subject.requirements.append(requirement)
    return list(subjects.values())


def _client_area(requirement_id: str) -> str:
    """``client.permission.answer`` -> ``permission``: every client id shares the ``client``
    prefix, so the part after it is what tells the areas apart."""
    parts = requirement_id.split(".")
    return parts[1] if parts[0] == "client" and len(parts) > 2 else parts[0]


def load_client_rows(path: Path) -> list[dict[str, Any]]:
    """Rows from one JSON file: a list of rows, ``{"results": [rows]}``, or a checker-style
    report ``{"client": NAME, "requirements": [{id, tier, verdict, reason, ...}]}``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return [dict(row) for row in data]
    if isinstance(data.get("results"), list):
        return [dict(row) for row in data["results"]]
    client = data.get("client") or path.stem
    if isinstance(client, Mapping):
        client = client.get("name") or path.stem
    return [{**r, "client": str(client)} for r in data.get("requirements") or []]


def render_page(
    runs: Sequence[AgentRun],
    client_rows: Sequence[Mapping[str, Any]] | None = None,
    profile: str = "acp",
) -> str:
    agents = agent_subjects(runs)
    clients = client_subjects(client_rows or [])
    legend = "".join(
        f'<span class="{cls}">{escape(label)}</span>'
        for cls, label in _CELL_LABEL.items()
        if cls != CELL_NOT_RUN
    )
    client_section = _grid("client", clients, "client") if clients else "<p>no client runs</p>"
    details = [*_details("agent", agents), *_details("client", clients)]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ACP interop matrix</title>
<style>{_STYLE}</style></head><body>
<h1>ACP interop matrix (--profile {escape(profile)})</h1>
<p class="legend">{legend}</p>
<p>Each cell: the area's verdict, then <code>pass/fail/n.a.</code> requirement counts
(<code>+Ne</code>: checks without a verdict). <em>fail</em> means a MUST or CAPABILITY
requirement failed; <em>partial</em> only SHOULD/INFO failures or missing verdicts.
A cell with failures links to them.</p>
<h2>Agents</h2>
{_grid("agent", agents, "agent")}
<h2>Clients</h2>
{client_section}
<h2>Failure details</h2>
{"".join(details) or "<p>no failures</p>"}
</body></html>
"""


def write_page(
    runs: Sequence[AgentRun],
    out_dir: Path,
    client_rows: Sequence[Mapping[str, Any]] | None = None,
    profile: str = "acp",
) -> Path:
    """Write ``peers-matrix.html`` into ``out_dir`` (beside ``peers-matrix.json``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "peers-matrix.html"
    path.write_text(render_page(runs, client_rows, profile), encoding="utf-8")
    return path
