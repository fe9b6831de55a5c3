"""An echo agent written on the official agent-client-protocol SDK runs through the checker.

What it fails is a finding about the SDK (or the tiny agent), not a checker failure; the
test asserts that the run completes with well-formed results and no harness errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.report import json_report

from tests.checker.checks.conformance_checker_support import SDK_AGENT, run_checker


@pytest.mark.interop
@pytest.mark.subprocess
def test_sdk_echo_agent_run_completes_with_a_well_formed_report(tmp_path: Path) -> None:
    areas = [
        "jsonrpc",
        "session.new-*",
        "prompt.text-accepted",
        "ext",
        "transport",
        "schema",
        "shutdown",
    ]
    result = run_checker([sys.executable, str(SDK_AGENT)], only=areas)
    harness = {
        rid: r.reason for rid, r in result.results.items() if r.verdict is Verdict.HARNESS_ERROR
    }
    assert harness == {}
    assert result.results["session.new-returns-id"].verdict is Verdict.PASS
    assert result.results["prompt.text-accepted"].verdict is Verdict.PASS
    path = tmp_path / "sdk.json"
    json_report.write(result, path)
    data = json.loads(path.read_text())
    assert data["agent"]["command"][-1].endswith("sdk_echo_agent.py")
    assert all(r["verdict"] in {"pass", "fail", "not-applicable"} for r in data["requirements"])
