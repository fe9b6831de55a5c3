"""A report made under ``--profile acp`` re-judged under ``iac-code``: house-rule failures
block there, verdicts themselves do not change."""

from __future__ import annotations

from acp_conformance.peers.retier import under_profile


def _report(*requirements: dict[str, str]) -> dict[str, object]:
    return {
        "options": {"profile": "acp"},
        "status": "conformant",
        "exitCode": 0,
        "verdictLine": "CONFORMANT (1 SHOULD/INFO failures)",
        "requirements": list(requirements),
    }


def test_a_house_rule_failure_blocks_under_iac_code() -> None:
    report = _report(
        {"id": "jsonrpc.parse-error", "tier": "SHOULD", "verdict": "fail"},
        {"id": "init.responds", "tier": "MUST", "verdict": "pass"},
    )
    strict = under_profile(report, "iac-code")
    assert strict["status"] == "not-conformant" and strict["exitCode"] == 1
    assert strict["verdictLine"] == "NOT CONFORMANT: 1 MUST failure"
    assert [r["tier"] for r in strict["requirements"]] == ["MUST", "MUST"]
    assert [r["verdict"] for r in strict["requirements"]] == ["fail", "pass"]
    assert strict["rejudgedFrom"] == "acp" and strict["options"]["profile"] == "iac-code"
    # The original is untouched, and re-judging under its own profile changes nothing.
    assert report["status"] == "conformant"
    assert under_profile(report, "acp")["verdictLine"] == report["verdictLine"]


def test_a_run_stopped_by_the_preflight_keeps_its_verdict() -> None:
    report = {**_report(), "status": "inconclusive", "aborted": {"verdict": "harness-error"}}
    assert under_profile(report, "iac-code")["status"] == "inconclusive"
