"""Two rule profiles: ``acp`` blocks only on what ACP requires, ``iac-code`` also on the
project's house rules; every requirement cites a public source."""

from __future__ import annotations

import pytest
from acp_conformance.catalogue import REQUIREMENTS, select
from acp_conformance.requirements import Tier

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker


def test_house_rules_are_should_under_acp_and_keep_their_tier_under_iac_code() -> None:
    acp = {r.id: r for r in select([], "acp")}
    strict = {r.id: r for r in select([], "iac-code")}
    house = [r for r in REQUIREMENTS.values() if r.house and r.blocking]
    assert house, "some house rules block under iac-code"
    for req in house:
        assert acp[req.id].tier is Tier.SHOULD
        assert strict[req.id].tier is req.tier
    normative = [r.id for r in REQUIREMENTS.values() if not r.house]
    assert all(acp[rid].tier is REQUIREMENTS[rid].tier for rid in normative)


def test_the_issue_s_house_rules_are_marked_house() -> None:
    for rid in (
        "session.unknown-id-rejected",
        "modes.unknown-mode-rejected",
        "config.unknown-id-rejected",
        "auth.unknown-method-rejected",
        "session.new-relative-cwd-rejected",
        "ext.unknown-request",
        "jsonrpc.parse-error",
        "jsonrpc.invalid-request",
    ):
        assert REQUIREMENTS[rid].house, rid


def test_every_requirement_cites_a_public_source_not_the_project_spec() -> None:
    for req in REQUIREMENTS.values():
        assert "SPEC §" not in req.reference, req.id
        assert any(
            source in req.reference
            for source in (
                "https://agentclientprotocol.com/protocol/",
                "https://agentclientprotocol.com/rfds/",
                "https://www.jsonrpc.org/specification",
            )
        ), req.id
        if req.house:
            assert req.reference.startswith("iac-code house rule"), req.id


@pytest.mark.subprocess
@pytest.mark.parametrize(("profile", "exit_code"), [("acp", 0), ("iac-code", 1)])
def test_a_house_rule_failure_blocks_only_under_the_iac_code_profile(
    profile: str, exit_code: int
) -> None:
    result = run_checker(
        raw_agent("--defect", "silent-invalid-json"), only=["jsonrpc.parse-error"], profile=profile
    )
    item = result.results["jsonrpc.parse-error"]
    assert item.verdict.value == "fail"
    assert item.requirement.tier is (Tier.SHOULD if profile == "acp" else Tier.MUST)
    assert result.exit_code == exit_code
