"""Run-wide checks: how each agent process ended (stdin EOF, no SIGKILL, no orphans)."""

from __future__ import annotations

from collections.abc import Callable

from ..harness.process import Rung
from ..outcomes import (
    Outcome,
    Verdict,
    failed,
    not_applicable,
    passed,
)
from ..requirements import RUN_WIDE, check
from ..scenarios.check_context import AgentRun, RunRecord


def _ended_runs(record: RunRecord) -> list[AgentRun]:
    return [
        run
        for run in record.runs
        if run.exit is not None
        and not run.custom_shutdown
        and run.exit.rung is not Rung.ALREADY_EXITED
    ]


def _shutdown_outcomes(
    record: RunRecord, ok: Callable[[AgentRun], bool], what: str
) -> list[Outcome]:
    runs = _ended_runs(record)
    if not runs:
        return [not_applicable("no agent process was shut down by the checker")]
    bad = [run for run in runs if not ok(run)]
    if not bad:
        return [passed(f"{len(runs)} agent processes checked")]
    outcome = failed(
        f"{len(bad)} of {len(runs)} processes {what}: "
        + ", ".join(f"{run.id} ({run.exit.rung.value if run.exit else '?'})" for run in bad[:5]),
        exits={run.id: run.exit.to_json() for run in bad[:10] if run.exit},
    )
    outcome.run_id = bad[0].id
    return [outcome]


@check("shutdown.exits-on-stdin-eof", scenario=RUN_WIDE)
def exits_on_stdin_eof(record: RunRecord) -> list[Outcome]:
    outcomes = _shutdown_outcomes(
        record,
        lambda run: run.exit is not None and run.exit.rung is Rung.STDIN_EOF,
        "did not exit after stdin closed",
    )
    shortened = [
        run.exit.eof_wait
        for run in _ended_runs(record)
        if run.exit is not None
        and run.exit.eof_wait is not None
        and run.exit.rung is not Rung.STDIN_EOF
    ]
    if shortened and outcomes[0].verdict is Verdict.FAIL:
        # The first such process had the full wait (see ScenarioRuntime.shutdown).
        outcomes[0].reason += (
            f" ({len(shortened)} of them were given {max(shortened):g} s, once an earlier "
            "process had not exited within the full wait)"
        )
    return outcomes


@check("shutdown.no-sigkill-needed", scenario=RUN_WIDE)
def no_sigkill_needed(record: RunRecord) -> list[Outcome]:
    return _shutdown_outcomes(
        record,
        lambda run: run.exit is not None and run.exit.rung in (Rung.STDIN_EOF, Rung.SIGTERM),
        "needed SIGKILL",
    )


@check("shutdown.no-orphans", scenario=RUN_WIDE)
def no_orphans(record: RunRecord) -> list[Outcome]:
    return _shutdown_outcomes(
        record,
        lambda run: run.exit is not None and not run.exit.orphans,
        "left processes behind in their group",
    )
