"""A self-contained HTML page (``--html``): summary, filters, expandable failure transcripts.

No external assets: the styles and the few lines of filtering script are inline, and every
piece of agent output is escaped.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from ..outcomes import Outcome, Verdict
from ..run_result import RequirementResult, RunResult
from . import findings
from .excerpt import exchange, needs_transcript, runs_by_id

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
.decisive{background:#ffe08a;font-weight:bold;display:inline-block;width:100%}
.soft-note{color:#555;font-style:italic}h2{font-size:1.1em;margin-top:1.5em}
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


def _frame(frame: dict) -> str:
    decisive = " decisive" if frame.get("decisive") else ""
    return (
        f'<span class="frame {escape(frame["dir"])}{decisive}" data-seq="{frame["seq"]}">'
        f"#{frame['seq']} {frame['t']:.3f}s {escape(frame['dir'])} {escape(frame['line'])}</span>"
    )


def _transcripts(outcomes: list[Outcome], runs: dict, *, unfolded: bool = False) -> str:
    """Each failure's whole exchange (decisive frames highlighted), evidence and stderr;
    ``unfolded`` (a blocking row) shows them without a click."""
    blocks = []
    opening = "<details open>" if unfolded else "<details>"
    for outcome in outcomes:
        if not (needs_transcript(outcome) and outcome.run_id in runs):
            continue
        data = exchange(runs[outcome.run_id], outcome)
        lines = "\n".join(_frame(f) for f in data["frames"])
        # The cited frames first, on their own: in a long exchange they may sit below the
        # fold of its scrolled box.
        cited = "\n".join(_frame(f) for f in data["frames"] if f.get("decisive"))
        evidence = escape(json.dumps(outcome.evidence, default=str, indent=1)[:4000])
        blocks.append(
            f"{opening}<summary>{escape(outcome.check)}: {escape(outcome.reason)} "
            f"({escape(data['runId'])}, {data['totalFrames']} frames)</summary>"
            + (
                f'<pre class="cited">{cited}</pre><small>the whole exchange:</small>'
                if cited
                else ""
            )
            + f"<pre>{lines}</pre>"
            + (f"<pre>{evidence}</pre>" if outcome.evidence else "")
            + (f"<pre>stderr:\n{escape(data['stderrTail'])}</pre>" if data["stderrTail"] else "")
            + "</details>"
        )
    return "".join(blocks)


def _parts(item: RequirementResult) -> list[tuple[str, bool, list[Outcome], str]]:
    """The rows of one requirement as (tier, blocking, outcomes, soft note): a MUST whose
    failures are partly blocking and partly judged as SHOULD gets one row for each, so a
    blocking outcome never shares a row with a non-blocking one."""
    req = item.requirement
    soft = [o for o in item.outcomes if o.verdict is Verdict.FAIL and o.soft is not None]
    hard = [o for o in item.outcomes if o.verdict is Verdict.FAIL and o.soft is None]
    if not (req.blocking and soft and hard):
        note = "; ".join(dict.fromkeys(o.soft or "" for o in soft if o.soft)) if soft else ""
        return [(req.tier.value, req.blocking, item.outcomes, note)]
    note = "; ".join(dict.fromkeys(o.soft or "" for o in soft))
    return [(req.tier.value, True, hard, ""), ("SHOULD", False, soft, note)]


def _rows(item: RequirementResult, runs: dict) -> list[str]:
    req = item.requirement
    adds = findings.house_addition(req)
    beyond = f"<br><em>beyond ACP: {escape(adds)}</em>" if adds else ""
    rows = []
    for tier, blocking, outcomes, note in _parts(item):
        key = _key(item)
        if item.baseline == "expected":
            reason = item.baseline_reason or ""
        else:
            first = next((o for o in outcomes if o.verdict is item.verdict and o.reason), None)
            reason = first.reason if first is not None else item.reason
        soft_note = (
            f'<br><span class="soft-note">judged as SHOULD: {escape(note)}</span>' if note else ""
        )
        rows.append(
            f'<tr class="req" data-verdict="{escape(key)}" data-area="{escape(req.area)}"'
            f' data-blocking="{"yes" if blocking else "no"}">'
            f"<td><code>{escape(req.id)}</code><br><small>{escape(req.statement)}<br>"
            f"{escape(req.reference)}{beyond}</small></td>"
            f"<td>{escape(tier)}</td>"
            f'<td class="v-{escape(key)}">{escape(key)}</td>'
            f"<td>{escape(reason or '')}{soft_note}"
            f"{_transcripts(outcomes, runs, unfolded=blocking)}</td></tr>"
        )
    return rows


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
    tables = []
    for title, section in findings.sections(result):
        ranked = sorted(section, key=_rank)
        rows = "".join(row for item in ranked for row in _rows(item, runs))
        tables.append(
            f"<h2>{escape(title)}</h2><table><thead><tr>"
            "<th>requirement</th><th>tier</th><th>verdict</th><th>reason / evidence</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>"
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
{"".join(tables)}
</body></html>
"""


def write(result: RunResult, path: Path) -> None:
    path.write_text(render(result), encoding="utf-8")
