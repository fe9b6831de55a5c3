"""Transcript excerpts for reports: the frames around what an outcome points at."""

from __future__ import annotations

from typing import Any

from ..outcomes import Outcome, Verdict
from ..runner import RunResult
from ..scenarios.check_context import AgentRun

CONTEXT = 3
TAIL = 30
MAX_FRAMES = 60
LINE_LIMIT = 2000
STDERR_TAIL = 4000


def runs_by_id(result: RunResult) -> dict[str, AgentRun]:
    return {run.id: run for run in result.runs}


def excerpt(run: AgentRun, outcome: Outcome) -> dict[str, Any]:
    frames = run.frames
    if outcome.frames:
        # The frames the reason names always come first; context fills what room is left.
        cited = sorted({seq for seq in outcome.frames if 0 <= seq < len(frames)})[:MAX_FRAMES]
        wanted: set[int] = set(cited)
        for distance in range(1, CONTEXT + 1):
            for seq in cited:
                for near in (seq - distance, seq + distance):
                    if 0 <= near < len(frames) and len(wanted) < MAX_FRAMES:
                        wanted.add(near)
        chosen = [frames[i] for i in sorted(wanted)]
    else:
        chosen = frames[-TAIL:]
    stderr = run.recorder.stderr_text()
    return {
        "runId": run.id,
        "frames": [f.to_json(LINE_LIMIT) for f in chosen],
        "totalFrames": len(frames),
        "stderrTail": stderr[-STDERR_TAIL:],
        "exit": run.exit.to_json() if run.exit else None,
        "startError": run.start_error,
    }


def needs_transcript(outcome: Outcome) -> bool:
    return outcome.verdict in (Verdict.FAIL, Verdict.HARNESS_ERROR)
