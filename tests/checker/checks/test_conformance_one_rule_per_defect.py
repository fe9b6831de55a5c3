"""Each seeded defect is charged to the rule written for it, once (issue 36, item 3): the
rules whose probes merely meet the defect on their way stay green."""

from __future__ import annotations

import pytest
from acp_conformance.outcomes import Verdict

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker

#: The rules a notification probe judges: each ends in a barrier request answered with an
#: error, which the defect below sends with its id retyped.
QUIET_PROBES = [
    "jsonrpc.notification-not-answered",
    "ext.unknown-notification-ignored",
    "cancel.cancel-request-unknown-ignored",
]


@pytest.mark.subprocess
def test_errors_that_retype_the_id_fail_id_echo_and_nothing_else() -> None:
    result = run_checker(
        raw_agent("--defect", "string-id-errors"),
        only=["jsonrpc.*", *QUIET_PROBES],
        profile="iac-code",
    )
    failing = {rid for rid, r in result.results.items() if r.verdict is Verdict.FAIL}
    assert failing == {"jsonrpc.id-echo"}, {r: result.results[r].reason for r in failing}
    assert "came back as '4343' (in an error)" in result.results["jsonrpc.id-echo"].reason
    assert not result.harness_errors
    for rule in QUIET_PROBES:
        assert result.results[rule].verdict is Verdict.PASS, result.results[rule].reason


@pytest.mark.subprocess
def test_a_batch_answered_line_by_line_fails_the_batch_rule_only() -> None:
    result = run_checker(
        raw_agent("--defect", "batch-line-by-line"), only=["jsonrpc.*"], profile="iac-code"
    )
    failing = {rid for rid, r in result.results.items() if r.verdict is Verdict.FAIL}
    assert failing == {"jsonrpc.batch-rejected"}, {r: result.results[r].reason for r in failing}
    assert "answered line by line" in result.results["jsonrpc.batch-rejected"].reason
    assert result.results["jsonrpc.one-response-per-request"].verdict is Verdict.PASS
