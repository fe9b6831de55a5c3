"""An agent that cannot be talked to stops the run after one initialize, with one verdict
and the agent's stderr, instead of every scenario waiting out its own timeout."""

from __future__ import annotations

import sys

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.report import terminal

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.mark.subprocess
def test_a_silent_agent_stops_the_run_after_the_preflight() -> None:
    silent = _python(
        "import sys, time; print('warming up', file=sys.stderr, flush=True); time.sleep(60)"
    )
    result = run_checker(silent)
    assert result.aborted is not None
    assert result.aborted.verdict is Verdict.HARNESS_ERROR
    assert "initialize" in result.aborted.outcome.reason
    assert "warming up" in result.aborted.outcome.evidence["stderr"]
    # One process (the preflight) instead of one per scenario.
    assert len(result.runs) == 1
    assert result.exit_code == 3
    report = terminal.render(result)
    assert "warming up" in report and report.splitlines()[-1].startswith("INCONCLUSIVE")


@pytest.mark.subprocess
def test_an_agent_that_exits_at_once_reports_its_exit_code_and_stderr() -> None:
    dying = _python("import sys; print('no API key configured', file=sys.stderr); sys.exit(4)")
    result = run_checker(dying)
    assert result.aborted is not None
    assert "exit code 4" in result.aborted.outcome.reason
    assert "no API key configured" in result.aborted.outcome.evidence["stderr"]
    assert result.exit_code == 3


@pytest.mark.subprocess
def test_a_mangled_response_id_is_an_agent_failure_found_at_once() -> None:
    result = run_checker(raw_agent("--defect", "wrong-id"))
    assert result.aborted is not None
    assert list(result.results) == ["jsonrpc.id-echo"]
    assert result.results["jsonrpc.id-echo"].verdict is Verdict.FAIL
    assert result.exit_code == 1
    assert result.verdict_line().startswith("NOT CONFORMANT: jsonrpc.id-echo")
