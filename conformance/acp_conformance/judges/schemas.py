"""Run-wide checks: every recorded message against the schema of its method and protocol
version, the agent's and the checker's own, and the error ``data`` shapes ACP defines."""

from __future__ import annotations

from typing import Any

from ..fuzzing import resolved_schema
from ..outcomes import (
    Outcome,
    failed,
    harness_error,
    out_of_scope,
    passed,
    soften,
)
from ..requirements import RUN_WIDE, check
from ..scenarios.check_context import AgentRun, RunRecord
from ..validation import method_index, validate_frames
from ..versions import schema_version, schemas_for


def _violations(record: RunRecord) -> list[tuple[AgentRun, Any]] | str:
    if record.backend is None:
        return record.backend_error or "schema validator unavailable"
    if "violations" not in record.cache:
        index = method_index()
        found: list[tuple[AgentRun, Any]] = []
        for run in record.runs:
            # Each run is judged by the schemas of the version it negotiated.
            judged_by = schemas_for(run, record.backend, index, record.config.v2_draft)
            if judged_by is not None:
                found.extend((run, v) for v in validate_frames(run.frames, *judged_by))
        record.cache["violations"] = found
    cached: list[tuple[AgentRun, Any]] = record.cache["violations"]
    return cached


@check("schema.agent-messages-valid", scenario=RUN_WIDE)
def agent_messages_valid(record: RunRecord) -> list[Outcome]:
    found = _violations(record)
    if isinstance(found, str):
        return [harness_error(found)]
    outcomes = []
    by_run: dict[str, list[Any]] = {}
    for run, violation in found:
        if violation.direction == "a2c" and violation.part != "error-data":
            by_run.setdefault(run.id, []).append(violation)
    runs = {run.id: run for run in record.runs}
    for run_id, violations in by_run.items():
        null = [v for v in violations if _null_for_optional_object(runs[run_id], v)]
        hard = [v for v in violations if v not in null]
        for group, soft in ((hard, None), (null, NULL_RESULT)):
            if not group:
                continue
            outcome = failed(
                f"{len(group)} schema violations in {run_id}: {group[0].describe()}",
                frames=[v.seq for v in group[:10]],
                violations=[v.to_json() for v in group[:20]],
            )
            outcome.run_id = run_id
            outcomes.append(soften(outcome, soft) if soft else outcome)
    total = sum(1 for run in record.runs for f in run.frames if f.direction == "a2c" and f.is_json)
    return outcomes or [passed(f"{total} agent messages validated")]


#: Why ``result: null`` for a result object without required fields is judged as SHOULD.
NULL_RESULT = (
    "result null where the schema defines an object with no required field (the spec once "
    "showed null for session/load; judged as SHOULD)"
)


def _null_for_optional_object(run: AgentRun, violation: Any) -> bool:
    """Whether ``violation`` is a ``result: null`` answering a method whose result is an object
    with no required field (``{}`` would do): ACP's own examples used null there."""
    if violation.part != "result" or violation.seq >= len(run.frames):
        return False
    msg = run.frames[violation.seq].message
    if not (isinstance(msg, dict) and "result" in msg and msg["result"] is None):
        return False
    version = schema_version(run)
    if version is None:
        return False
    entry = method_index(version).get(violation.method) or {}
    if not entry.get("result"):
        return False
    schema = resolved_schema(entry["file"], entry["result"], version)
    return not schema.get("required")


#: Why ``schema.error-data-shapes`` does not apply under ``--profile acp``.
ACP_ERROR_DATA = (
    "ACP's error object allows any `data` (or none); the per-code data shapes are iac-code's "
    "own convention, judged only under --profile iac-code"
)


@check("schema.error-data-shapes", scenario=RUN_WIDE)
def error_data_shapes(record: RunRecord) -> list[Outcome]:
    """ACP's error object leaves ``data`` free (any value, or none): the per-code shapes are
    iac-code's own convention (SPEC §1.1), so only ``--profile iac-code`` judges them; under
    ``--profile acp`` the rule does not apply and can never fail a peer."""
    if record.config.profile == "acp":
        return [out_of_scope(ACP_ERROR_DATA)]
    found = _violations(record)
    if isinstance(found, str):
        return [harness_error(found)]
    bad = [(run, v) for run, v in found if v.direction == "a2c" and v.part == "error-data"]
    if not bad:
        return [passed("every error's data matches its code's schema")]
    run, first = bad[0]
    outcome = failed(
        f"{len(bad)} errors with data not matching their code's schema: {first.describe()}",
        frames=[v.seq for _, v in bad[:10]],
        violations=[v.to_json() for _, v in bad[:20]],
    )
    outcome.run_id = run.id
    return [outcome]


@check("harness.client-messages-valid", scenario=RUN_WIDE)
def client_messages_valid(record: RunRecord) -> list[Outcome]:
    found = _violations(record)
    if isinstance(found, str):
        return [harness_error(found)]
    mine = [(run, v) for run, v in found if v.direction == "c2a" and not v.deliberate]
    if mine:
        run, first = mine[0]
        outcome = harness_error(
            f"the checker sent {len(mine)} schema-invalid messages: {first.describe()}",
            violations=[v.to_json() for _, v in mine[:20]],
        )
        outcome.run_id, outcome.frames = run.id, [first.seq]
        return [outcome]
    return [passed("every non-probe client message is schema-valid")]
