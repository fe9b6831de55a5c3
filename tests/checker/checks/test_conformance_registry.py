"""The requirements registry and the checks bound to it stay in one-to-one agreement."""

from __future__ import annotations

import re

from acp_conformance.catalogue import CHECKS, REQUIREMENTS, select
from acp_conformance.requirements import Tier
from acp_conformance.scenarios.agent_run import SCENARIOS


def test_every_requirement_has_at_least_one_check() -> None:
    bound = {c.requirement for c in CHECKS}
    assert sorted(set(REQUIREMENTS) - bound) == []


def test_every_check_names_a_registered_requirement_and_scenario() -> None:
    assert [c.name for c in CHECKS if c.requirement not in REQUIREMENTS] == []
    assert [c.name for c in CHECKS if c.scenario is not None and c.scenario not in SCENARIOS] == []


def test_requirement_ids_are_area_dot_name() -> None:
    pattern = re.compile(r"^[a-z]+\.[a-z0-9]+(-[a-z0-9]+)*$")
    assert [r for r in REQUIREMENTS if not pattern.match(r)] == []


def test_capability_requirements_name_their_gate() -> None:
    assert [r.id for r in REQUIREMENTS.values() if r.tier is Tier.CAPABILITY and not r.gate] == []


def test_every_requirement_has_a_statement_and_reference() -> None:
    assert [r.id for r in REQUIREMENTS.values() if not r.statement or not r.reference] == []


def test_select_matches_areas_globs_and_substrings() -> None:
    assert {r.area for r in select(["init"])} == {"init"}
    assert [r.id for r in select(["jsonrpc.id-*"])] == ["jsonrpc.id-echo"]
    assert "session.load-unknown-id" in {r.id for r in select(["unknown-id"])}
    assert len(select([])) == len(REQUIREMENTS)


def test_checks_live_in_checks_and_judges_never_in_the_scenario_fixtures() -> None:
    homes = {"acp_conformance.checks": "scenario", "acp_conformance.judges": "run-wide"}
    misplaced = [
        f"{c.func.__module__}.{c.name}"
        for c in CHECKS
        if c.func.__module__.rsplit(".", 1)[0] not in homes
        or (c.scenario is None) != (c.func.__module__.startswith("acp_conformance.judges."))
    ]
    assert misplaced == []
