"""Transcript excerpts for reports: the frames around what an outcome points at."""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import id_key
from ..outcomes import Outcome, Verdict
from ..run_result import RunResult
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


#: The most frames of one failing exchange the HTML shows (a larger span falls back to the
#: cited frames with their context, as :func:`excerpt` chooses them).
EXCHANGE_LIMIT = 400


def _partner(run: AgentRun, seq: int) -> int | None:
    """The seq of the request a response at ``seq`` answers, or of the response to a request
    at ``seq`` (same id, the other direction); None when there is none."""
    frame = run.frames[seq]
    msg = frame.message
    if not (isinstance(msg, dict) and "id" in msg):
        return None
    key = id_key(msg["id"])
    is_request = "method" in msg
    span = range(seq + 1, len(run.frames)) if is_request else range(seq - 1, -1, -1)
    for near in span:
        other = run.frames[near]
        found = other.message
        if (
            other.direction != frame.direction
            and isinstance(found, dict)
            and ("method" in found) != is_request
            and "id" in found
            and id_key(found["id"]) == key
        ):
            return near
    return None


def exchange(run: AgentRun, outcome: Outcome) -> dict[str, Any]:
    """Every frame of the exchange an outcome failed on: from the earliest cited frame (or the
    request a cited response answers) to the latest (or the answer to a cited request), with
    ``CONTEXT`` frames either side; each frame says whether it is ``decisive`` (cited)."""
    frames = run.frames
    cited = sorted({seq for seq in outcome.frames if 0 <= seq < len(frames)})
    data = excerpt(run, outcome)
    if not cited:
        return data
    partners = [_partner(run, seq) for seq in cited]
    ends = [*cited, *(p for p in partners if p is not None)]
    first = max(min(ends) - CONTEXT, 0)
    last = min(max(ends) + CONTEXT, len(frames) - 1)
    chosen = (
        frames[first : last + 1]
        if last - first < EXCHANGE_LIMIT
        else [frames[f["seq"]] for f in data["frames"]]
    )
    decisive = set(cited)
    data["frames"] = [{**f.to_json(LINE_LIMIT), "decisive": f.seq in decisive} for f in chosen]
    return data
