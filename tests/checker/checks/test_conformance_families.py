"""Check families as tables (checks/families.py): every row of a family names a rule of the
rules data and has exactly one check, the family's one body, registered in the family's
scenario and counted as defined in the module that registers the rows (a check's module is
its place in the run order, so a v2 row must not run where the v1 rows do)."""

from __future__ import annotations

import pytest
from acp_conformance.catalogue import CHECKS, REQUIREMENTS
from acp_conformance.checks.cancelled_turns import (
    V1_CANCEL,
    V1_CANCEL_WHILE_ASKING,
    V2_CANCEL_META,
    V2_TURN_CUTS,
    ends_cancelled,
    nothing_after_end,
)
from acp_conformance.checks.http_status import REFUSALS
from acp_conformance.checks.prompt_content import V1_CONTENT, V2_CONTENT
from acp_conformance.checks.session_unknown import UNKNOWN_SESSION_ANSWERS
from acp_conformance.scenarios.catalog import CANCEL, HTTP, SESSIONS, TURNS
from acp_conformance.scenarios.v2_agent import V2_SCENARIO

FAMILIES = [
    pytest.param(REFUSALS, HTTP, "acp_conformance.checks.http_status", id="http-refusals"),
    pytest.param(
        UNKNOWN_SESSION_ANSWERS, SESSIONS, "acp_conformance.checks.session_unknown", id="unknown"
    ),
    pytest.param(V1_CONTENT, TURNS, "acp_conformance.checks.prompt", id="v1-content"),
    pytest.param(V2_CONTENT, V2_SCENARIO, "acp_conformance.checks.v2_prompts", id="v2-content"),
    pytest.param(V1_CANCEL, CANCEL, "acp_conformance.checks.cancel", id="v1-cut-turns"),
    pytest.param(
        V1_CANCEL_WHILE_ASKING, CANCEL, "acp_conformance.checks.cancel", id="v1-cancel-asking"
    ),
    pytest.param(V2_TURN_CUTS, V2_SCENARIO, "acp_conformance.checks.v2_turns", id="v2-cut-turns"),
    pytest.param(
        V2_CANCEL_META, V2_SCENARIO, "acp_conformance.checks.v2_cancel", id="v2-cancel-meta"
    ),
]


@pytest.mark.parametrize(("rows", "scenario", "module"), FAMILIES)
def test_every_row_is_a_rule_with_one_check_from_its_registering_module(
    rows: tuple[object, ...], scenario: str, module: str
) -> None:
    for row in rows:
        rule_id = row.rule  # type: ignore[attr-defined]
        assert rule_id in REQUIREMENTS, rule_id  # a rule of the data files
        checks = [c for c in CHECKS if c.requirement == rule_id]
        assert len(checks) == 1, rule_id
        (check,) = checks
        assert check.scenario == scenario, rule_id
        assert check.func.__module__ == module, rule_id
        assert check.name == rule_id.replace(".", "_").replace("-", "_")


def test_a_family_body_serves_every_row_of_its_table() -> None:
    # One body per family: the rows differ in data only, so the bodies' code is shared.
    cut_turns = V1_CANCEL + V1_CANCEL_WHILE_ASKING + V2_TURN_CUTS + V2_CANCEL_META
    for rows in (REFUSALS, UNKNOWN_SESSION_ANSWERS, V1_CONTENT + V2_CONTENT, cut_turns):
        codes = {c.func.__code__ for c in CHECKS if c.requirement in {r.rule for r in rows}}
        assert len(codes) == 1


def test_the_http_checks_outside_the_table_count_as_defined_in_http() -> None:
    http_checks = [c for c in CHECKS if c.scenario == HTTP]
    assert {c.func.__module__ for c in http_checks} == {
        "acp_conformance.checks.http",
        "acp_conformance.checks.http_status",
    }
    assert len(http_checks) == len({c.requirement for c in http_checks}) == 18


def test_each_judgement_of_a_cancelled_turn_is_made_on_both_protocol_versions() -> None:
    # "Ends cancelled" and "nothing after its end" are written once: each is made by a v1
    # row (judging the prompt's answer) and by a v2 row (judging the idle), and the version
    # is the rows' data (the turn they observe says how its version ends a turn).
    rows = V1_CANCEL + V1_CANCEL_WHILE_ASKING + V2_TURN_CUTS + V2_CANCEL_META
    for judgement in (ends_cancelled, nothing_after_end):
        versions = {row.rule.startswith("version.v2-") for row in rows if judgement in row.judges}
        assert versions == {False, True}, judgement.__name__
