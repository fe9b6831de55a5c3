"""Seeded defects the official ACP test kit found in iac-code, each blamed on the checker's own
requirement: v1 defects of the raw fixture agent, v2 defects of the raw v2 fixture agent. The
correct fixtures pass the same requirements."""

from __future__ import annotations

import pytest
from acp_conformance.outcomes import Verdict

from tests.checker.checks.conformance_checker_support import (
    WITH_MODEL,
    raw_agent,
    raw_v2_agent,
    run_checker,
)

V1_DEFECTS = {
    "usage-at-root": "schema.stable-root-fields",
    "commands-after-load": "session.load-state-before-response",
}
V2_DEFECTS = {
    "ignore-cancel": "version.v2-cancel-ends-cancelled",
    "close-errors": "version.v2-close-cancels-turn",
    "no-user-echo": "version.v2-user-message-echo",
    "commands-after-resume": "version.v2-resume-updates-before-answer",
    "chunks-without-whole": "version.v2-replay-message-whole-first",
    "no-batches": "version.v2-batch-basics",
    "answer-cancel": "version.v2-cancel-meta-not-answered",
    "odd-stop-reason": "version.v2-stop-reason-known",
    "reject-image": "version.v2-prompt-image-accepted",
    "fs-call": "version.v2-no-unadvertised-client-methods",
    "close-idle-errors": "version.v2-close-idle-session",
    # The rest of the official kit's v2 MANDATORY and CAPABILITY ids (issue 20 item 2).
    "resume-bad-config": "version.v2-resume-result",
    "replay-always": "version.v2-resume-no-replay",
    "replay-new-ids": "version.v2-replay-keeps-message-id",
    "resume-rejects-dirs": "version.v2-resume-additional-directories",
    "config-partial": "version.v2-set-config-full-list",
    "config-update-partial": "version.v2-config-update-complete",
    "terminal-env-duplicate": "version.v2-terminal-auth-shape",
    "no-logout": "version.v2-logout",
    "login-still-locked": "version.v2-login",
    "empty-message-id": "version.v2-message-ids",
    "same-message-id": "version.v2-message-ids",
    "tool-call-no-id": "version.v2-tool-call-ids",
    "plan-no-id": "version.v2-plan-ids",
    "terminal-relative-cwd": "version.v2-terminal-updates",
    "terminal-bad-base64": "version.v2-terminal-updates",
    "odd-tool-kind": "version.v2-open-enums",
    "permission-untitled": "version.v2-permission-requests",
}


@pytest.mark.subprocess
@pytest.mark.parametrize(("defect", "requirement"), sorted(V1_DEFECTS.items()))
def test_seeded_v1_defect_fails_its_requirement(defect: str, requirement: str) -> None:
    result = run_checker(raw_agent("--defect", defect), only=[requirement])
    item = result.results[requirement]
    assert item.verdict is Verdict.FAIL, (item.verdict, item.reason)


@pytest.mark.subprocess
def test_the_correct_v1_fixture_passes_those_requirements() -> None:
    result = run_checker(raw_agent(), only=sorted(V1_DEFECTS.values()))
    verdicts = {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
    assert {v for v, _ in verdicts.values()} == {Verdict.PASS}, verdicts


@pytest.mark.subprocess
@pytest.mark.parametrize(("defect", "requirement"), sorted(V2_DEFECTS.items()))
def test_seeded_v2_defect_fails_its_requirement(defect: str, requirement: str) -> None:
    result = run_checker(raw_v2_agent("--defect", defect), only=[requirement], **WITH_MODEL)
    item = result.results[requirement]
    assert item.verdict is Verdict.FAIL, (item.verdict, item.reason)


@pytest.mark.subprocess
def test_the_correct_v2_fixture_passes_every_new_v2_requirement() -> None:
    judged = sorted(
        {
            *V2_DEFECTS.values(),
            "version.v2-batch-requests",
            "version.v2-prompt-audio-accepted",
            "version.v2-prompt-embedded-context-accepted",
        }
    )
    result = run_checker(raw_v2_agent(), only=judged, **WITH_MODEL)
    verdicts = {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
    assert {v for v, _ in verdicts.values()} == {Verdict.PASS}, verdicts


@pytest.mark.subprocess
def test_a_terminal_method_offered_to_a_v2_client_that_declared_it_is_no_gating_failure() -> None:
    # The v2 client declares terminal auth as capabilities.auth.terminal {}, not v1's flag.
    judged = ["version.v2-terminal-auth-shape", "gating.terminal-auth-advertised"]
    result = run_checker(raw_v2_agent(), only=judged, **WITH_MODEL)
    verdicts = {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
    assert verdicts["version.v2-terminal-auth-shape"][0] is Verdict.PASS, verdicts
    assert verdicts["gating.terminal-auth-advertised"][0] is not Verdict.FAIL, verdicts


@pytest.mark.subprocess
@pytest.mark.parametrize("defect", ["ignore-cancel", "cancel-end-turn"])
def test_a_v2_cancel_that_does_not_idle_cancelled_blocks_under_profile_acp(defect: str) -> None:
    # The v2 twin of cancel.prompt-returns-cancelled: judged on the idle's stop reason the
    # agent sends, as a MUST (issue 36, item 2).
    rule = "version.v2-cancel-ends-cancelled"
    result = run_checker(raw_v2_agent("--defect", defect), only=[rule], profile="acp", **WITH_MODEL)
    item = result.results[rule]
    assert item.verdict is Verdict.FAIL, (item.verdict, item.reason)
    assert item.requirement.tier.value == "MUST" and not item.softened
    assert "'end_turn'" in item.reason
    assert result.exit_code == 1


@pytest.mark.subprocess
def test_a_chunk_after_the_cancelled_idle_blocks_under_profile_acp() -> None:
    # The cut-turn family's "nothing after its end" on v2: judged after the idle, by the same
    # judgement as v1's cancel.no-updates-after-response.
    rule = "version.v2-cancel-ends-cancelled"
    defect = raw_v2_agent("--defect", "update-after-cancel")
    result = run_checker(defect, only=[rule], profile="acp", **WITH_MODEL)
    item = result.results[rule]
    assert item.verdict is Verdict.FAIL, (item.verdict, item.reason)
    assert item.requirement.tier.value == "MUST" and not item.softened
    assert "agent_message_chunk" in item.reason and "the idle of the cancelled" in item.reason
    assert result.exit_code == 1
