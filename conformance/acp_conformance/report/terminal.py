"""The human-readable report: one table per area, then the verdict line."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterable

from ..requirements import Requirement
from ..run_result import RequirementResult, RunResult
from . import findings, turn_transcript

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


def _wrapped(head: str, text: str, width: int) -> list[str]:
    """``head`` followed by the whole of ``text``, wrapped under itself (never cut)."""
    text = " ".join(text.split())
    room = max(width - len(head), 40)
    chunks = textwrap.wrap(text, room, break_long_words=True, break_on_hyphens=False) or [""]
    pad = " " * len(head)
    return [head + chunks[0]] + [pad + chunk for chunk in chunks[1:]]


#: Reasons of n/a results that come from running without a model (``--llm none``).
_NO_MODEL = ("--llm", "model is unreachable", "agent's own model")


def render(result: RunResult, *, width: int | None = None, verbose: bool = False) -> str:
    """The report: ACP rules, then house rules, each as one table per area (not-applicable
    rows counted per area and listed only when ``verbose``; every reason shown whole,
    wrapped to ``width``); then what blocks the verdict, one root cause at a time; the
    verdict line is always the last line (scripts read it)."""
    width = width or shutil.get_terminal_size((100, 40)).columns
    lines: list[str] = []
    agent = result.agent_info or {}
    lines.append(
        f"acp-conformance: {' '.join(result.config.argv)}"
        + (f"  [{agent.get('name')} {agent.get('version', '')}]" if agent else "")
    )
    lines.append(
        f"profile {result.config.profile}, tools {result.config.tools},"
        f" v2 draft {result.config.v2_draft}"
    )
    if result.aborted is not None:
        lines += _aborted(result)
    id_width = max((len(r) for r in result.results), default=10)
    shown_causes: dict[tuple[str, int], str] = {}
    hidden = 0
    for title, section in findings.sections(result):
        lines += ["", f"== {title}"]
        areas: dict[str, list[RequirementResult]] = {}
        for item in section:
            areas.setdefault(item.requirement.area, []).append(item)
        for area, items in areas.items():
            shown = [i for i in items if verbose or _label(i) != "n/a"]
            skipped = len(items) - len(shown)
            hidden += skipped
            lines.append("")
            lines.append(f"{area}" + (f"  (+{skipped} n/a)" if skipped else ""))
            for item in shown:
                lines += _row(result, item, id_width, width, shown_causes)
    lines.append("")
    if hidden:
        lines.append(f"{hidden} not-applicable requirements are counted per area; -v lists them")
    if (hint := _no_model_hint(result)) is not None:
        lines += textwrap.wrap(hint, max(width, 60), break_on_hyphens=False)
    if result.aborted is None:
        transcript = turn_transcript.render(result.runs, width)
        lines += [*transcript, ""] if transcript else []
    lines += _unexercised(result, width)
    lines += _blockers(result, width)
    if result.aborted is None or result.results:
        lines.append(summary_line(result.results.values()))
    lines.append(result.verdict_line())
    return "\n".join(lines)


def _row(
    result: RunResult,
    item: RequirementResult,
    id_width: int,
    width: int,
    shown_causes: dict[tuple[str, int], str],
) -> list[str]:
    """One requirement's line(s): id, tier, verdict, reason (a house rule's with what it
    adds beyond ACP) and, for a failure, its evidence, or a pointer to the rule above that
    already showed the same root cause."""
    reason = item.baseline_reason if item.baseline == "expected" else item.reason
    req = item.requirement
    adds = findings.house_addition(req)
    if adds and _label(item) != "n/a":
        reason = f"{reason or ''} [beyond ACP: {adds}]"
    head = f"  {req.id:<{id_width}}  {req.tier.value:<10}  {_label(item):<7}  "
    lines = _wrapped(head, reason or "", width)
    if item.verdict.value != "fail" or item.baseline == "expected":
        return lines
    failure = findings.first_failure(item)
    key = (
        (failure.run_id, min(failure.frames))
        if failure is not None and failure.run_id and failure.frames
        else None
    )
    if key is not None and key in shown_causes:
        lines.append(
            f"{EVIDENCE_PAD}same root cause as {shown_causes[key]} above ({key[0]} #{key[1]})"
        )
        return lines
    if key is not None:
        shown_causes[key] = req.id
    return lines + _evidence(result, item, width)


#: How many of a failure's cited frames the terminal shows; each is cut to the width.
EVIDENCE_FRAMES = 3
EVIDENCE_PAD = "      "


def _snippet(result: RunResult, run_id: str, seq: int, prefix: str, width: int) -> str | None:
    """``prefix`` then frame ``seq`` of run ``run_id`` on one line, cut with … at ``width``."""
    run = next((r for r in result.runs if r.id == run_id), None)
    if run is None or not 0 <= seq < len(run.frames):
        return None
    frame = run.frames[seq]
    head = f"{prefix}{run.id} #{seq} {frame.direction}: "
    text = " ".join(frame.text(max(width, 100) * 4).split())
    room = max(width - len(head), 40)
    return head + (text if len(text) <= room else text[: room - 1] + "…")


def _evidence(result: RunResult, item: RequirementResult, width: int) -> list[str]:
    """The frames a failure rests on, as wide as the terminal, and a one-line hint on where
    to see all of it."""
    out: list[str] = []
    failure = findings.first_failure(item)
    if failure is not None and failure.run_id is not None:
        for seq in failure.frames[:EVIDENCE_FRAMES]:
            line = _snippet(result, failure.run_id, seq, EVIDENCE_PAD, width)
            out += [line] if line is not None else []
        more = len(failure.frames) - EVIDENCE_FRAMES
        if more > 0:
            out.append(f"{EVIDENCE_PAD}… and {more} more frames")
    # A house rule's citation starts "iac-code house rule (…)": its basis is the source.
    source = item.requirement.reference.rsplit("basis: ", 1)[-1].split(" ", 1)[0]
    out.append(
        f"{EVIDENCE_PAD}hint: --html or --report-json for the transcript; the rule: {source}"
    )
    return out


def _one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width, 40) - 1] + "…"


def _blockers(result: RunResult, width: int) -> list[str]:
    """The closing list of what makes the run NOT CONFORMANT: one entry per root cause (its
    first frame), the rules it broke under it, one line each."""
    blocking = findings.blocks_verdict(result)
    if not blocking:
        return []
    grouped = findings.causes(blocking)
    lines = [
        f"Blocks the verdict: {len(blocking)} rule{'s' * (len(blocking) != 1)},"
        f" {len(grouped)} root cause{'s' * (len(grouped) != 1)}"
    ]
    for cause in grouped:
        indent = "  "
        if cause.run_id is not None and cause.seq is not None:
            frame = _snippet(result, cause.run_id, cause.seq, "  first frame ", width)
            lines.append(frame or f"  first frame {cause.run_id} #{cause.seq}")
            indent = "    "
        for item in cause.items:
            reason = (
                f"stale baseline entry: now passes ({item.baseline_reason})"
                if item.baseline == "stale"
                else item.reason
            )
            where = "" if cause.run_id is not None else "  (no frame)"
            head = f"{indent}{item.requirement.id}  {item.requirement.tier.value}  "
            lines.append(head + _one_line((reason or "") + where, width - len(head)))
    return lines


def _no_model_hint(result: RunResult) -> str | None:
    """A hint when prompt-turn requirements were not applicable for want of a model."""
    if result.config.llm != "none" or result.aborted is not None:
        return None
    idle = [
        r
        for r in result.results.values()
        if r.verdict.value == "not-applicable" and any(m in r.reason for m in _NO_MODEL)
    ]
    if not idle:
        return None
    blocking = sum(1 for r in idle if r.requirement.blocking)
    return (
        f"hint: {len(idle)} prompt-turn requirements ({blocking} MUST/CAPABILITY) were not "
        "applicable because no model was given; run with --llm anthropic (or openai) and point "
        "the agent at the scripted model ({llm_url} in --agent-env) to exercise them"
    )


def _unexercised(result: RunResult, width: int) -> list[str]:
    """The MUST/CAPABILITY requirements that apply but were not judged, one line each with
    the reason (cut to the width: -v shows them whole)."""
    missing = result.unexercised
    if not missing:
        return []
    id_width = max(len(item.requirement.id) for item in missing)
    lines = [f"{len(missing)} MUST/CAPABILITY requirements not exercised, and why:"]
    for item in missing:
        line = f"  {item.requirement.id:<{id_width}}  {' '.join((item.reason or '').split())}"
        lines.append(line if len(line) <= width else line[: max(width, 60) - 1] + "…")
    return lines


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
    lines = [
        f"{'id':<{id_width}}  {'tier':<10}  {'versions':<8}  {'gate / needs':<40}  "
        "statement  [reference]"
    ]
    for req in reqs:
        gate = req.gate or ""
        if req.llm:
            gate = (gate + " " if gate else "") + "(scripted LLM)"
        lines.append(
            f"{req.id:<{id_width}}  {req.tier.value:<10}  {req.versions_text:<8}  "
            f"{gate:<40}  {req.statement}  [{req.reference}]"
        )
    return "\n".join(lines)
