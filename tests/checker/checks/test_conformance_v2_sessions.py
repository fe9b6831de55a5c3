"""The v2 session surface beyond session/new (session/list and its cwd filter,
session/delete, additional directories) against the raw fixture speaking v2
(``--quirk speaks-v2``), with seeded defects that v1's own checks catch too."""

from __future__ import annotations

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.requirements import Tier

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker

V2_SESSIONS = [
    "version.v2-session-list",
    "version.v2-session-delete",
    "version.v2-additional-directories",
]


@pytest.mark.subprocess
def test_a_v2_agent_passes_the_session_surface() -> None:
    result = run_checker(raw_agent("--quirk", "speaks-v2"), only=V2_SESSIONS)
    verdicts = {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
    assert {v for v, _ in verdicts.values()} == {Verdict.PASS}, verdicts


@pytest.mark.subprocess
def test_the_v2_session_surface_is_out_of_scope_for_a_v1_agent() -> None:
    result = run_checker(raw_agent(), only=V2_SESSIONS)
    assert all(r.out_of_scope for r in result.results.values())


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("defect", "v2_requirement", "v1_requirement", "why"),
    [
        ("list-ignores-cwd", "version.v2-session-list", "session.list-cwd-filter", "not []"),
        (
            "delete-keeps-session",
            "version.v2-session-delete",
            "session.delete-works",
            "still listed",
        ),
    ],
)
def test_session_defects_fail_in_v2_and_in_v1(
    defect: str, v2_requirement: str, v1_requirement: str, why: str
) -> None:
    result = run_checker(
        raw_agent("--quirk", "speaks-v2", "--defect", defect), only=[v2_requirement, v1_requirement]
    )
    v2 = result.results[v2_requirement]
    assert v2.verdict is Verdict.FAIL and why in v2.reason, v2.reason
    assert result.results[v1_requirement].verdict is Verdict.FAIL


def test_tiers_follow_the_text() -> None:
    from acp_conformance.catalogue import REQUIREMENTS

    assert REQUIREMENTS["version.v2-session-list"].tier is Tier.MUST
    assert REQUIREMENTS["version.v2-session-delete"].tier is Tier.SHOULD
