"""A self-contained HTML page (``--html``): summary, filters, expandable failure transcripts.

No external assets: the styles and the few lines of filtering script are inline, and every
piece of agent output is escaped.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from ..runner import RequirementResult, RunResult
from .excerpt import excerpt, needs_transcript, runs_by_id

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.3em}.verdict{font-weight:bold;font-size:1.1em;padding:.4em .6em;display:inline-block}
.conformant{background:#d6f5d6}.not-conformant{background:#f8d0d0}.inconclusive{background:#f8ecc0}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.3em .5em;vertical-align:top;text-align:left}
.v-pass{color:#176317}.v-fail,.v-stale{color:#b00000;font-weight:bold}.v-not-applicable{color:#777}
.v-harness-error{color:#9a6500;font-weight:bold}.v-expected{color:#555;font-style:italic}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;max-height:30em;font-size:12px;white-space:pre-wrap}
.c2a{color:#174a8a}.a2c{color:#222}.filters{margin:1em 0}code{font-size:12px}
"""

_SCRIPT = """
function applyFilters(){
  var v=document.getElementById('fv').value,a=document.getElementById('fa').value;
  document.querySelectorAll('tr.req').forEach(function(r){
    var ok=(!v||r.dataset.verdict===v)&&(!a||r.dataset.area===a);
    r.style.display=ok?'':'none';
  });
}
"""


def _key(item: RequirementResult) -> str:
    return item.baseline or item.verdict.value


def _transcripts(item: RequirementResult, runs: dict) -> str:
    blocks = []
    for outcome in item.outcomes:
        if not (needs_transcript(outcome) and outcome.run_id in runs):
            continue
        data = excerpt(runs[outcome.run_id], outcome)
        lines = "\n".join(
            f'<span class="{escape(f["dir"])}">#{f["seq"]} {f["t"]:.3f}s {escape(f["dir"])} '
            f"{escape(f['line'])}</span>"
            for f in data["frames"]
        )
        evidence = escape(json.dumps(outcome.evidence, default=str, indent=1)[:4000])
        blocks.append(
            f"<details><summary>{escape(outcome.check)}: {escape(outcome.reason)} "
            f"({escape(data['runId'])}, {data['totalFrames']} frames)</summary>"
            f"<pre>{lines}</pre>"
            + (f"<pre>{evidence}</pre>" if outcome.evidence else "")
            + (f"<pre>stderr:\n{escape(data['stderrTail'])}</pre>" if data["stderrTail"] else "")
            + "</details>"
        )
    return "".join(blocks)


#: Row order: what needs attention first (blocking failures), passes and n/a last.
_ORDER = ("stale", "fail", "harness-error", "expected", "pass", "not-applicable")


def _rank(item: RequirementResult) -> tuple[int, int]:
    key = _key(item)
    rank = _ORDER.index(key) if key in _ORDER else len(_ORDER)
    return rank, 0 if item.requirement.blocking else 1


def _aborted(result: RunResult) -> str:
    if result.aborted is None:
        return ""
    stderr = str(result.aborted.outcome.evidence.get("stderr") or "(empty)")
    return (
        f"<p>Stopped after the preflight initialize: {escape(result.aborted.outcome.reason)}</p>"
        f"<pre>agent stderr (last lines):\n{escape(stderr)}</pre>"
    )


def render(result: RunResult) -> str:
    runs = runs_by_id(result)
    # Stable sort: within a rank, requirements keep the registry's order.
    items = sorted(result.results.values(), key=_rank)
    areas = sorted({i.requirement.area for i in items})
    verdicts = sorted({_key(i) for i in items})
    counts = {v: sum(1 for i in items if _key(i) == v) for v in verdicts}
    rows = []
    for item in items:
        req = item.requirement
        reason = item.baseline_reason if item.baseline == "expected" else item.reason
        rows.append(
            f'<tr class="req" data-verdict="{escape(_key(item))}" data-area="{escape(req.area)}">'
            f"<td><code>{escape(req.id)}</code><br><small>{escape(req.statement)}<br>{escape(req.reference)}</small></td>"
            f"<td>{escape(req.tier.value)}</td>"
            f'<td class="v-{escape(_key(item))}">{escape(_key(item))}</td>'
            f"<td>{escape(reason or '')}{_transcripts(item, runs)}</td></tr>"
        )
    options_v = "".join(
        f'<option value="{escape(v)}">{escape(v)} ({counts[v]})</option>' for v in verdicts
    )
    options_a = "".join(f'<option value="{escape(a)}">{escape(a)}</option>' for a in areas)
    agent = result.agent_info or {}
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ACP conformance report</title>
<style>{_STYLE}</style><script>{_SCRIPT}</script></head><body>
<h1>ACP conformance: <code>{escape(" ".join(result.config.argv))}</code></h1>
<p>Agent: {escape(str(agent.get("name", "?")))} {escape(str(agent.get("version", "")))} ·
{len(items)} requirements · {result.duration:.1f} s · LLM: {escape(result.config.llm)} ·
profile: {escape(result.config.profile)} · tools: {escape(result.config.tools)} ·
v2 draft: {escape(result.config.v2_draft)}</p>
<p class="verdict {escape(result.status)}">{escape(result.verdict_line())}</p>
{_aborted(result)}
<p>{" · ".join(f"{escape(v)}: {n}" for v, n in counts.items())}</p>
<div class="filters">
Verdict <select id="fv" onchange="applyFilters()"><option value="">all</option>{options_v}</select>
Area <select id="fa" onchange="applyFilters()"><option value="">all</option>{options_a}</select>
</div>
<table><thead><tr>
<th>requirement</th><th>tier</th><th>verdict</th><th>reason / evidence</th>
</tr></thead>
<tbody>{"".join(rows)}</tbody></table>
</body></html>
"""


def write(result: RunResult, path: Path) -> None:
    path.write_text(render(result), encoding="utf-8")
