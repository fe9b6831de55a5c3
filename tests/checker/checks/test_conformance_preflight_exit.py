"""An agent that exits at once (`/bin/true`, `/bin/false`) is an INCONCLUSIVE run (exit 3)
with one line saying why — never a traceback, whether its stdin was already closed when the
initialize request was written or it closed stdout while the checker waited."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from acp_conformance.harness.agent_client import AgentConnection, AgentExited
from acp_conformance.outcomes import Verdict

from tests.checker.checks.conformance_checker_support import run_checker

CLI = [sys.executable, "-m", "acp_conformance.cli"]


@pytest.mark.subprocess
@pytest.mark.parametrize("program", ["true", "false"])
def test_an_agent_that_exits_at_once_is_inconclusive_without_a_traceback(program: str) -> None:
    path = shutil.which(program)
    if path is None:
        pytest.skip(f"no {program} on PATH")
    done = subprocess.run(
        [*CLI, "run", "--timeout", "3", "--", path],
        capture_output=True,
        text=True,
        timeout=60,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 3, output
    assert "Traceback" not in output
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("INCONCLUSIVE: ") and "no scenario can run" in last
    assert "exit code" in last


@pytest.mark.subprocess
def test_a_closed_stdin_when_initialize_is_written_is_a_harness_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def closed(*args: object, **kwargs: object) -> None:
        raise AgentExited("agent's stdin is closed")

    # Deterministic stand-in for the race `/bin/true` wins only sometimes.
    monkeypatch.setattr(AgentConnection, "start_request", closed)
    result = run_checker([sys.executable, "-c", "import sys; sys.exit(7)"])
    assert result.aborted is not None
    assert result.aborted.verdict is Verdict.HARNESS_ERROR
    reason = result.aborted.outcome.reason
    assert "before initialize could be sent" in reason and "exit code 7" in reason
    assert result.exit_code == 3
