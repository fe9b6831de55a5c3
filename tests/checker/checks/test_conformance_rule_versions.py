"""Every rule names the ACP protocol versions it is judged on (``versions``: v1, v2 or both),
and that is what the checker does: a scenario check runs only in a scenario of one of its
rule's versions (the protocol-v2 scenario's connections negotiate 2, every other scenario's
1), a run-wide judge is handed only the connections of its rule's versions, and a run that
never speaks a rule's version reports the rule not applicable, naming the version."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any, cast

import pytest
from acp_conformance.catalogue import CHECKS, REQUIREMENTS, RULES
from acp_conformance.checks.robustness import stay_on_v1
from acp_conformance.outcomes import Outcome, Verdict
from acp_conformance.report.json_report import to_data
from acp_conformance.report.terminal import render_requirements
from acp_conformance.requirements import PROTOCOL_VERSIONS, rule_from_data, rules_of_file
from acp_conformance.run_result import RunResult
from acp_conformance.scenarios.agent_run import AgentRun, RunRecord
from acp_conformance.scenarios.catalog import PROTOCOL_V2
from acp_conformance.version_scope import VersionViews, version_name

from tests.checker.checks.conformance_checker_support import (
    LOADED_MACHINE_TIMEOUT,
    WITH_MODEL,
    raw_v2_agent,
    run_checker,
)

ENTRY = {"id": "x.y", "tier": "MUST", "statement": "s", "citation": "c"}

#: Checks that ask for a version the agent may not have (65535 or 0 in the initialize
#: scenario, 2 in the protocol-v2 one): the agent answers the version it picks, so the
#: connection they judge is v1 or v2, whichever it speaks.
NEGOTIATES_ANY_VERSION = frozenset(
    {"init.unsupported-version-not-echoed", "init.version-zero", "version.v2-negotiation"}
)


# -- the data ---------------------------------------------------------------------------------


def test_every_rule_names_its_versions_after_loading() -> None:
    for rule in RULES.values():
        assert rule.versions, rule.id
        assert set(rule.versions) <= set(PROTOCOL_VERSIONS), rule.id
        assert list(rule.versions) == sorted(rule.versions), rule.id
        assert rule.to_json()["versions"] == list(rule.versions)
    # the v2-only rules are version.v2-* rules; those carry draft ranges, and no other rule
    v2_only = {rule.id for rule in RULES.values() if rule.versions == ("v2",)}
    v2_area = {rid for rid in RULES if rid.startswith("version.v2-")}
    assert v2_only <= v2_area
    assert v2_area - v2_only == {"version.v2-negotiation"}  # a v1 agent answers it with 1
    assert {rule.id for rule in RULES.values() if rule.drafts is not None} == v2_area


def test_a_file_gives_the_default_and_a_rule_may_override_it() -> None:
    text = """
versions = ["v1"]

[[rule]]
id = "x.plain"
tier = "MUST"
statement = "s"
citation = "c"

[[rule]]
id = "x.both"
versions = ["v2", "v1"]
tier = "SHOULD"
statement = "t"
citation = "c"
"""
    plain, both = rules_of_file(text, "rules/x.toml")
    assert plain.versions == ("v1",) and plain.drafts is None
    assert both.versions == ("v1", "v2")  # canonical order, whatever the data's
    only_v2 = rule_from_data({**ENTRY, "versions": ["v2"]}, "rules/x.toml")
    assert only_v2.drafts is not None and only_v2.drafts.label == "alpha.3..newest"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({**ENTRY, "versions": ["v1", "v3"]}, r"x\.y: unknown protocol versions \['v3'\]"),
        ({**ENTRY, "versions": ["1"]}, r"x\.y: unknown protocol versions \['1'\]"),
        ({**ENTRY, "versions": []}, r"x\.y: versions must be a non-empty list"),
        ({**ENTRY, "versions": "v1"}, r"x\.y: versions must be a non-empty list"),
        ({**ENTRY, "versions": ["v1", "v1"]}, r"x\.y: versions \['v1', 'v1'\] names a version"),
        ({**ENTRY}, r"x\.y: no versions \(set `versions = \[\.\.\.\]` on the rule"),
        (
            {**ENTRY, "versions": ["v1"], "drafts": "alpha.8"},
            r"x\.y: a v2 draft range \(drafts = 'alpha\.8'\) needs v2 in its versions \['v1'\]",
        ),
    ],
)
def test_a_bad_versions_entry_is_refused_naming_the_rule(
    entry: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValueError, match=r"^rules/x\.toml: " + problem):
        rule_from_data(entry, "rules/x.toml")


def test_a_files_default_is_checked_like_a_rules_own() -> None:
    text = (
        'versions = ["v4"]\n[[rule]]\nid = "x.y"\ntier = "MUST"\nstatement = "s"\ncitation = "c"\n'
    )
    with pytest.raises(ValueError, match=r"x\.y: unknown protocol versions \['v4'\]"):
        rules_of_file(text, "rules/x.toml")
    with pytest.raises(ValueError, match=r"unknown top-level keys \['version'\]"):
        rules_of_file('version = ["v1"]\n', "rules/x.toml")


# -- the checks bound to the data ------------------------------------------------------------


def test_a_scenario_check_runs_only_where_its_rules_versions_are_spoken() -> None:
    for chk in CHECKS:
        versions = REQUIREMENTS[chk.requirement].versions
        if chk.scenario == PROTOCOL_V2:
            assert "v2" in versions, f"{chk.name} drives v2 connections: {chk.requirement}"
        elif chk.scenario is not None:
            assert "v1" in versions, f"{chk.name} drives v1 connections: {chk.requirement}"


def test_every_version_a_rule_names_has_something_that_judges_it() -> None:
    """A version in ``versions`` is judged: by a check in a scenario speaking it, by a run-wide
    judge (handed the connections of each version), by the proxy (live traffic at any
    version) or, for v1, by the client command's agent double (it answers 1)."""
    scenarios: dict[str, set[str | None]] = {}
    for chk in CHECKS:
        scenarios.setdefault(chk.requirement, set()).add(chk.scenario)
    for rule in RULES.values():
        bound = scenarios.get(rule.id, set())
        speaks = {"v2" if s == PROTOCOL_V2 else "v1" for s in bound if s is not None}
        if None in bound or "proxy" in rule.judged_by or rule.id in NEGOTIATES_ANY_VERSION:
            speaks |= set(PROTOCOL_VERSIONS)
        if "client" in rule.judged_by:
            speaks.add("v1")
        assert set(rule.versions) <= speaks, rule.id


# -- what a run does with it ------------------------------------------------------------------


def _connection(version: int, asked: int | None = None) -> AgentRun:
    """A recorded connection whose agent answered ``version`` to its initialize (which asked
    for ``asked``, when given)."""
    initialize: dict[str, Any] = {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
    if asked is not None:
        initialize["params"] = {"protocolVersion": asked}
    frames = [
        SimpleNamespace(direction="c2a", message=initialize),
        SimpleNamespace(
            direction="a2c",
            message={"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version}},
        ),
    ]
    return cast(AgentRun, SimpleNamespace(id=f"run-v{version}", frames=frames))


def test_a_run_wide_judge_is_handed_only_the_connections_of_its_rules_versions() -> None:
    v1, v2, echoed = _connection(1), _connection(2), _connection(65535)
    assert [version_name(run) for run in (v1, v2, echoed)] == ["v1", "v2", None]
    record = RunRecord(cast(Any, None), [v1, v2, echoed])
    views = VersionViews(record)
    both = RULES["transport.stdout-only-json"]
    v1_only = RULES["prompt.updates-before-response"]
    v2_only = RULES["version.v2-requires-action-resumes"]
    assert views.for_rule(both) is record
    seen = views.for_rule(v1_only)
    assert isinstance(seen, RunRecord) and seen.runs == [v1, echoed]  # 65535: every judge's
    assert views.for_rule(v1_only) is seen  # one view per set of versions, one cache
    seen = views.for_rule(v2_only)
    assert isinstance(seen, RunRecord) and seen.runs == [v2, echoed]

    refused = VersionViews(RunRecord(cast(Any, None), [v1, _connection(1)])).for_rule(v2_only)
    assert isinstance(refused, Outcome) and refused.verdict is Verdict.NOT_APPLICABLE
    assert "no connection of this run negotiated protocol v2" in refused.reason
    assert not refused.scope  # never asked: says nothing about the agent


def test_v2_rules_are_out_of_scope_for_an_agent_that_answers_1_when_asked_for_2() -> None:
    """Out of scope, not merely not applicable: they leave the agent's exercised count."""
    v2_only = RULES["version.v2-requires-action-resumes"]
    record = RunRecord(cast(Any, None), [_connection(1, asked=1), _connection(1, asked=2)])
    declined = VersionViews(record).for_rule(v2_only)
    assert isinstance(declined, Outcome) and declined.verdict is Verdict.NOT_APPLICABLE
    assert declined.scope and "asked for protocol v2" in declined.reason


def test_a_run_of_a_v1_agent_judges_each_outcome_on_its_rules_versions(
    correct_full_run: RunResult,
) -> None:
    """The correct raw fixture speaks only v1 (it answers 1 to a v2 initialize): every outcome
    tied to a connection is about a connection of its rule's versions, and every v2-only rule
    is not applicable with a reason naming version 2."""
    runs = {run.id: run for run in correct_full_run.runs}
    assert {version_name(run) for run in runs.values()} == {"v1"}
    for rid, item in correct_full_run.results.items():
        for outcome in item.outcomes:
            # a judged outcome (a rule not applicable says so on the connection that showed it)
            if outcome.run_id in runs and outcome.verdict in (Verdict.PASS, Verdict.FAIL):
                assert version_name(runs[outcome.run_id]) in item.requirement.versions, rid
        if item.requirement.versions == ("v2",):  # the agent answered 1 to a v2 initialize
            # out of scope: none of them leaves the agent's exercised count short
            assert item.verdict is Verdict.NOT_APPLICABLE and item.out_of_scope, rid
            reasons = [o.reason for o in item.outcomes]
            assert all(re.search(r"\bv2\b|version 2", why) for why in reasons), (rid, reasons)


@pytest.mark.subprocess
def test_a_run_of_a_v2_agent_judges_each_outcome_on_its_rules_versions() -> None:
    """The v2 fixture speaks v2 to a v2 initialize and a minimal v1 otherwise: every passing or
    failing outcome tied to a connection (a scenario check's, a run-wide judge's finding) is
    about a connection of its rule's versions, on both versions."""
    result = run_checker(raw_v2_agent(), timeout=LOADED_MACHINE_TIMEOUT, **WITH_MODEL)
    runs = {run.id: run for run in result.runs}
    judged_on: dict[str, set[str | None]] = {}
    for rid, item in result.results.items():
        for outcome in item.outcomes:
            if outcome.run_id in runs and outcome.verdict in (Verdict.PASS, Verdict.FAIL):
                name = version_name(runs[outcome.run_id])
                judged_on.setdefault(rid, set()).add(name)
    assert {name for names in judged_on.values() for name in names} == {"v1", "v2"}
    # The fuzz scenario's drawn initialize asks for version 1 at most (stay_on_v1), so
    # its v1 rules never judge a connection the draw moved to v2.
    stray = {
        rid: sorted(map(str, names))
        for rid, names in judged_on.items()
        if not names <= set(RULES[rid].versions)
    }
    assert not stray, stray


def test_the_listing_and_the_json_report_show_each_rules_versions(
    correct_full_run: RunResult,
) -> None:
    listing = render_requirements([RULES["jsonrpc.id-echo"], RULES["version.v2-login"]])
    header, id_echo, v2 = listing.splitlines()
    assert header.split()[:3] == ["id", "tier", "versions"]
    assert id_echo.split()[:3] == ["jsonrpc.id-echo", "MUST", "v1+v2"]
    assert v2.split()[:3] == ["version.v2-login", "MUST", "v2"]
    entries = {entry["id"]: entry for entry in to_data(correct_full_run)["requirements"]}
    assert entries["turn.streamed-text"]["versions"] == ["v1"]
    assert entries["version.v2-login"]["versions"] == ["v2"]
    assert entries["schema.agent-messages-valid"]["versions"] == ["v1", "v2"]


def test_the_fuzzers_drawn_initialize_asks_for_version_1_at_most() -> None:
    """A schema-valid draw asking for 2 or more would move a v2 agent's fuzz connection to v2,
    where the v1 shapes the fuzzer judges by no longer hold."""
    assert stay_on_v1("initialize", {"protocolVersion": 7, "x": 1}) == {
        "protocolVersion": 1,
        "x": 1,
    }
    assert stay_on_v1("initialize", {"protocolVersion": 0}) == {"protocolVersion": 0}
    assert stay_on_v1("initialize", {"protocolVersion": True}) == {"protocolVersion": True}
    assert stay_on_v1("session/new", {"protocolVersion": 7}) == {"protocolVersion": 7}
