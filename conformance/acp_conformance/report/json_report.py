"""The stable machine-readable report (``--report-json``)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from .. import __version__
from ..run_result import RunResult
from .excerpt import excerpt, needs_transcript, runs_by_id

FORMAT = "acp-conformance-report"
FORMAT_VERSION = 1


def _schema_version() -> Any:
    try:
        from acp_schema import load_index

        return load_index().get("protocolVersion")
    except Exception:
        return None


def to_data(result: RunResult) -> dict[str, Any]:
    runs = runs_by_id(result)
    summary: dict[str, int] = {}
    requirements = []
    for item in result.results.values():
        key = item.baseline or item.verdict.value
        summary[key] = summary.get(key, 0) + 1
        req = item.requirement
        outcomes = []
        for outcome in item.outcomes:
            entry: dict[str, Any] = {
                "check": outcome.check,
                "verdict": outcome.verdict.value,
                "reason": outcome.reason,
                "evidence": outcome.evidence,
                "runId": outcome.run_id,
                "frames": outcome.frames,
            }
            if outcome.seconds is not None:
                entry["seconds"] = outcome.seconds
            if outcome.soft:
                entry["judgedAsShould"] = outcome.soft
            if outcome.scope:
                entry["outOfScope"] = True
            if needs_transcript(outcome) and outcome.run_id in runs:
                entry["transcript"] = excerpt(runs[outcome.run_id], outcome)
            outcomes.append(entry)
        requirements.append(
            {
                "id": req.id,
                "area": req.area,
                "tier": req.tier.value,
                "statement": req.statement,
                "reference": req.reference,
                "gate": req.gate,
                "needsLlm": req.llm,
                # The protocol versions whose connections the rule is judged on.
                "versions": list(req.versions),
                "verdict": item.verdict.value,
                "baseline": item.baseline,
                "baselineReason": item.baseline_reason,
                "reason": item.reason,
                "outcomes": outcomes,
            }
        )
    config = result.config
    return {
        "format": FORMAT,
        "formatVersion": FORMAT_VERSION,
        "checker": {"name": "acp-conformance", "version": __version__},
        "schema": {"protocolVersion": _schema_version()},
        "agent": {"command": config.argv, "info": result.agent_info},
        "options": {
            "timeout": config.timeout,
            "llm": config.llm,
            "profile": config.profile,
            "tools": config.tools,
            # The v2 draft graded (--v2-draft): which v2 rules applied, which shapes passed.
            "v2Draft": config.v2_draft,
            "jobs": config.jobs,
            "only": config.only,
            "authMethod": config.auth_method,
            "agentEnv": [k for k, _ in config.agent_env],
        },
        "startedAt": dt.datetime.fromtimestamp(result.started, dt.UTC).isoformat(),
        "durationSeconds": round(result.duration, 3),
        # What the run cost the machine: a maintainer sees whether the agent or the checker
        # took the time, and the peers matrix keeps CPU-heavy agents apart.
        "cpuSeconds": result.cpu.to_json() if result.cpu is not None else None,
        "status": result.status,
        "verdictLine": result.verdict_line(),
        "exitCode": result.exit_code,
        "summary": summary,
        "coverage": {
            "exercised": result.coverage[0],
            "applicable": result.coverage[1],
            "notExercised": [r.requirement.id for r in result.unexercised],
            "strict": config.strict_coverage,
        },
        "notes": result.notes,
        "aborted": _aborted(result),
        "requirements": requirements,
        "processes": [
            {
                "runId": run.id,
                "scenario": run.scenario,
                "frames": len(run.frames),
                # Where the time went: when each process started within the run and how
                # long it lived (None when the checker did not stop it itself).
                "startedAfterSeconds": round(run.recorder.started_wall - result.started, 3),
                "seconds": round(run.exit.at - run.recorder.started_wall, 3) if run.exit else None,
                "exit": run.exit.to_json() if run.exit else None,
            }
            for run in result.runs
        ],
    }


def _aborted(result: RunResult) -> dict[str, Any] | None:
    """Why the run stopped after the preflight initialize, with the agent's stderr tail."""
    if result.aborted is None:
        return None
    outcome = result.aborted.outcome
    return {
        "verdict": outcome.verdict.value,
        "requirement": result.aborted.requirement,
        "reason": outcome.reason,
        "stderr": outcome.evidence.get("stderr", ""),
    }


def write(result: RunResult, path: Path) -> None:
    path.write_text(
        json.dumps(to_data(result), indent=2, default=str, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
