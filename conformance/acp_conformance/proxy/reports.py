"""The proxy's reports on exit: JSON (``--report-json``) and a self-contained HTML page."""

from __future__ import annotations

import datetime as dt
import json
import time
from html import escape
from pathlib import Path
from typing import Any

from .. import __version__
from .monitor import LINE_LIMIT, Finding, LiveMonitor

FORMAT = "acp-conformance-proxy-report"
FORMAT_VERSION = 1
CONTEXT = 3
BLOCKING = ("MUST", "CAPABILITY")


def _context(monitor: LiveMonitor, finding: Finding) -> list[dict[str, Any]]:
    kept = monitor.frames
    low, high = max(0, finding.seq - CONTEXT), min(len(kept), finding.seq + CONTEXT + 1)
    return [f.to_json(LINE_LIMIT) for f in kept[low:high]]


def to_data(
    argv: list[str],
    monitor: LiveMonitor,
    *,
    exit_code: int | None,
    closed: list[str],
    skipped: int,
    started: float,
) -> dict[str, Any]:
    findings = sorted(monitor.findings, key=lambda f: f.seq)
    rules: dict[str, dict[str, Any]] = {}
    for finding in findings:
        entry = rules.setdefault(
            finding.rule.id,
            {
                "tier": finding.rule.tier,
                "side": finding.rule.side,
                "statement": finding.rule.statement,
                "reference": finding.rule.reference,
                "count": 0,
            },
        )
        entry["count"] += 1
    blocking = [f for f in findings if f.rule.tier in BLOCKING]
    return {
        "format": FORMAT,
        "formatVersion": FORMAT_VERSION,
        "checker": {"name": "acp-conformance", "version": __version__},
        "agent": {"command": argv, "exitCode": exit_code},
        "profile": monitor.profile,
        "protocolVersion": monitor.version,
        # The v2 draft graded (--v2-draft); v1 sessions are graded as v1 whatever it says.
        "v2Draft": monitor.v2_draft,
        "startedAt": dt.datetime.fromtimestamp(started, dt.UTC).isoformat(),
        "durationSeconds": round(time.time() - started, 3),
        "frames": dict(monitor.counts),
        "status": "violations" if blocking else "clean",
        "summary": {
            "findings": len(findings),
            "blocking": len(blocking),
            "agent": sum(1 for f in findings if f.rule.side == "agent"),
            "client": sum(1 for f in findings if f.rule.side == "client"),
        },
        "rules": rules,
        "findings": [{**f.to_json(), "context": _context(monitor, f)} for f in findings],
        "notes": monitor.notes,
        "closedPipes": closed,
        "skippedBytes": skipped,
    }


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}h1{font-size:1.3em}
.clean{background:#d6f5d6}.violations{background:#f8d0d0}
.status{padding:.4em .6em;display:inline-block;font-weight:bold}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.3em .5em;vertical-align:top;text-align:left}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;max-height:30em;font-size:12px;white-space:pre-wrap}
.c2a{color:#174a8a}.a2c{color:#222}.hit{background:#ffe08a}
.MUST,.CAPABILITY{color:#b00000;font-weight:bold}
"""


def _frame_line(frame: dict[str, Any], seq: int) -> str:
    cls = f"{escape(frame['dir'])}{' hit' if frame['seq'] == seq else ''}"
    return (
        f'<span class="{cls}">#{frame["seq"]} {frame["t"]:.3f}s {escape(frame["dir"])} '
        f"{escape(frame['line'])}</span>"
    )


def render_html(data: dict[str, Any]) -> str:
    rows = []
    for finding in data["findings"]:
        context = "\n".join(_frame_line(f, finding["seq"]) for f in finding["context"])
        if not context:
            context = escape(finding["line"])
        rows.append(
            f"<tr><td><code>{escape(finding['rule'])}</code><br><small>"
            f"{escape(data['rules'][finding['rule']]['statement'])}<br>"
            f"{escape(finding['reference'])}</small></td>"
            f'<td class="{escape(finding["tier"])}">{escape(finding["tier"])}</td>'
            f"<td>{escape(finding['side'])}</td>"
            f"<td>#{finding['seq']} {escape(finding['dir'])}: {escape(finding['reason'])}"
            f"<details><summary>frames</summary><pre>{context}</pre></details></td></tr>"
        )
    notes = "".join(f"<li>{escape(n)}</li>" for n in data["notes"])
    summary = data["summary"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ACP proxy report</title>
<style>{_STYLE}</style></head><body>
<h1>ACP live traffic: <code>{escape(" ".join(data["agent"]["command"]))}</code></h1>
<p>protocol v{data["protocolVersion"]} · v2 draft {escape(data["v2Draft"])} ·
profile {escape(data["profile"])} ·
{data["frames"].get("c2a", 0)} client frames, {data["frames"].get("a2c", 0)} agent frames ·
{data["durationSeconds"]} s · agent exit code {data["agent"]["exitCode"]}</p>
<p class="status {escape(data["status"])}">{summary["findings"]} findings
({summary["blocking"]} blocking; agent {summary["agent"]}, client {summary["client"]})</p>
{f"<ul>{notes}</ul>" if notes else ""}
<table><thead><tr><th>rule</th><th>tier</th><th>side</th><th>what / frames</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
</body></html>
"""


def write_html(path: Path, data: dict[str, Any]) -> None:
    path.write_text(render_html(data), encoding="utf-8")
