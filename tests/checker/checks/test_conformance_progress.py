"""Progress output: a live line on a terminal, plain lines (header, then areas) in logs."""

from __future__ import annotations

import io

from acp_conformance.catalogue import select
from acp_conformance.config import RunConfig
from acp_conformance.outcomes import passed
from acp_conformance.progress import LineProgress, TerminalProgress


def test_terminal_progress_redraws_one_line_with_scenario_requirement_and_time() -> None:
    out = io.StringIO()
    progress = TerminalProgress(RunConfig(argv=["agent"]), out)
    progress.started(select(["init"]), ["initialize", "envelope"])
    progress.check_started("initialize", "init.responds")
    progress.redraw()
    # Redrawn in place: carriage return and erase-line, no newline.
    line = out.getvalue().split("\n")[-1]
    assert line.startswith("\r\033[K[0/2 scenarios,")
    assert "initialize: init.responds" in line
    progress.scenario_done("initialize", [("init.responds", passed())])
    progress.finished()
    assert out.getvalue().endswith(" s\n") and "2 scenarios in" in out.getvalue()


def test_line_progress_prints_the_header_first_then_one_line_per_area() -> None:
    out = io.StringIO()
    progress = LineProgress(RunConfig(argv=["agent", "acp"]), out)
    progress.started(select(["init.*", "auth.*"]), ["initialize"])
    progress.scenario_done("initialize", [("init.responds", passed())])
    progress.finished()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("acp-conformance agent acp:")
    assert lines[1].split()[:2] == ["[1/1]", "initialize"]  # printed as the scenario ends
    assert [line.split()[0] for line in lines[2:4]] == ["init", "auth"]
    assert "1 pass" in lines[2]
