"""Walking one agent process's recording: the offences a judge finds in it, one outcome per
process, the agent's frames and session updates, and the client capabilities it advertised.
Shared by the run-wide judges of this package (and the checks that read updates)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..harness.recorder import Frame
from ..outcomes import (
    Outcome,
    failed,
    not_applicable,
    passed,
)
from ..scenarios.check_context import AgentRun, RunRecord

Offence = tuple[Frame, str]


def per_run(
    record: RunRecord, find: Callable[[AgentRun], Iterator[Offence]], what: str
) -> list[Outcome]:
    """One failing outcome per run with offences, or a single pass."""
    outcomes: list[Outcome] = []
    checked = 0
    for run in record.runs:
        checked += sum(1 for f in run.frames if f.direction == "a2c")
        offences = list(find(run))
        if offences:
            first = "; ".join(f"#{frame.seq}: {why}" for frame, why in offences[:3])
            outcome = failed(
                f"{len(offences)} {what} in {run.id}: {first}",
                frames=[frame.seq for frame, _ in offences[:10]],
                offences=[
                    {"seq": f.seq, "why": why, "line": f.text(300)} for f, why in offences[:10]
                ],
            )
            outcome.run_id = run.id
            outcomes.append(outcome)
    if not outcomes:
        if not checked:
            return [not_applicable("no agent frames were recorded")]
        return [passed(f"{checked} agent frames in {len(record.runs)} processes checked")]
    return outcomes


def messages(run: AgentRun) -> Iterator[tuple[Frame, dict[str, Any], dict[str, Any]]]:
    """(frame, message, its params or {}) of every JSON-RPC object the run recorded, both
    ways."""
    for frame in run.frames:
        msg = frame.message
        if isinstance(msg, dict):
            found = msg.get("params")
            yield frame, msg, found if isinstance(found, dict) else {}


def agent_frames(run: AgentRun) -> Iterator[Frame]:
    return (f for f in run.frames if f.direction == "a2c")


def agent_messages(
    frames: Iterable[Frame], method: str | None = None
) -> Iterator[tuple[Frame, dict[str, Any]]]:
    """(frame, message) of each JSON object the agent sent (with ``method``, if given)."""
    for frame in frames:
        msg = frame.message
        if frame.direction != "a2c" or not isinstance(msg, dict):
            continue
        if method is None or msg.get("method") == method:
            yield frame, msg


def session_updates(frames: Iterable[Frame]) -> Iterator[tuple[Frame, Any, dict[str, Any]]]:
    """(frame, sessionId, update) of each well-formed ``session/update`` the agent sent."""
    for frame, msg in agent_messages(frames, "session/update"):
        params = msg.get("params")
        if not isinstance(params, dict):
            continue
        update = params.get("update")
        if isinstance(update, dict):
            yield frame, params.get("sessionId"), update


def client_caps(run: AgentRun) -> dict[str, Any] | None:
    for frame in run.frames:
        msg = frame.message
        if frame.direction == "c2a" and isinstance(msg, dict) and msg.get("method") == "initialize":
            params = msg.get("params")
            if isinstance(params, dict):
                # v2 names them ``capabilities``; elicitation's gate reads the same in both.
                caps = params.get("clientCapabilities") or params.get("capabilities") or {}
                return {"clientCapabilities": caps}
    return None
