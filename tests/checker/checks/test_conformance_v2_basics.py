"""The v2 checks that need no v2 turn (distinct session ids, custom requests answered,
notifications not answered), against the raw fixture speaking just enough v2
(``--quirk speaks-v2``), each with a seeded defect."""

from __future__ import annotations

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.requirements import Tier

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker

V2_BASICS = [
    "version.v2-auth-methods",
    "version.v2-session-ids",
    "version.v2-custom-request-answered",
    "version.v2-notification-not-answered",
]


@pytest.mark.subprocess
def test_a_v2_agent_passes_the_basics() -> None:
    result = run_checker(raw_agent("--quirk", "speaks-v2"), only=V2_BASICS)
    verdicts = {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
    assert {v for v, _ in verdicts.values()} == {Verdict.PASS}, verdicts


@pytest.mark.subprocess
def test_a_v1_agent_is_out_of_scope_not_unexercised() -> None:
    result = run_checker(raw_agent(), only=V2_BASICS, strict_coverage=True)
    for item in result.results.values():
        assert item.verdict is Verdict.NOT_APPLICABLE and item.out_of_scope, item.reason
    assert result.exit_code == 0


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("defect", "requirement", "why"),
    [
        ("v2-repeat-session-id", "version.v2-session-ids", "the same id"),
        ("ignore-custom-requests", "version.v2-custom-request-answered", "never answered"),
        ("answer-notifications", "version.v2-notification-not-answered", "was answered"),
        ("terminal-auth-always", "version.v2-auth-methods", "terminal auth method 'login'"),
        ("v2-unprefixed-auth-type", "version.v2-auth-methods", "'vendor-sso'"),
    ],
)
def test_each_v2_basic_defect_fails_at_must(defect: str, requirement: str, why: str) -> None:
    result = run_checker(raw_agent("--quirk", "speaks-v2", "--defect", defect), only=[requirement])
    item = result.results[requirement]
    assert item.verdict is Verdict.FAIL, item.reason
    assert why in item.reason
    assert item.requirement.tier is Tier.MUST and result.exit_code == 1
