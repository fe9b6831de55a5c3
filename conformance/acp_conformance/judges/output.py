"""Run-wide judge of the bounds the checker reads an agent's output within (see
:mod:`..harness.limits`): a line over the cap or a flood ends the reading of that process,
and this rule says so once per process, with the last frame kept as evidence."""

from __future__ import annotations

from ..outcomes import Outcome, failed, not_applicable, passed
from ..requirements import RUN_WIDE, check
from ..scenarios.check_context import RunRecord


@check("transport.output-bounded", scenario=RUN_WIDE)
def output_bounded(record: RunRecord) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for run in record.runs:
        why = run.recorder.overflow
        if why is None:
            continue
        last = [f.seq for f in run.frames if f.direction == "a2c"][-1:]
        outcome = failed(f"the checker stopped reading {run.id}: {why}", frames=last)
        outcome.run_id = run.id
        outcomes.append(outcome)
    if outcomes:
        return outcomes
    if not record.runs:
        return [not_applicable("no agent process was started")]
    return [passed(f"{len(record.runs)} processes stayed within the output bounds")]
