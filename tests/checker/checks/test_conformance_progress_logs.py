"""In logs (no terminal) each scenario is reported as it finishes, and the area lines at the
end carry final counts, the run-wide checks' verdicts included."""

from __future__ import annotations

import io

import anyio
import pytest
from acp_conformance.config import RunConfig
from acp_conformance.progress import LineProgress
from acp_conformance.runner import execute

from tests.checker.checks.conformance_checker_support import FAST_TIMEOUT, raw_agent


@pytest.mark.subprocess
def test_log_lines_show_each_scenario_then_final_area_counts() -> None:
    config = RunConfig(
        argv=raw_agent(), only=["init.responds", "transport.utf8"], timeout=FAST_TIMEOUT, jobs=2
    )
    out = io.StringIO()
    result = anyio.run(execute, config, LineProgress(config, out))
    assert result.results["transport.utf8"].verdict.value == "pass"
    lines = out.getvalue().splitlines()
    scenario_lines = [line for line in lines if line.lstrip().startswith("[")]
    assert scenario_lines and all("s)" in line for line in scenario_lines)
    areas = {line.split()[0]: line for line in lines if "requirements" in line}
    # transport.utf8 is judged run-wide, after every scenario: its count is the final one.
    assert "1 pass" in areas["transport"] and "1 pass" in areas["init"]
    assert lines.index(scenario_lines[-1]) < lines.index(areas["init"])
