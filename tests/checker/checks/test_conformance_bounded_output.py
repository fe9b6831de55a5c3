"""The checker reads any agent in bounded memory (issue 34, item 1): a line over the cap, a
flood of small lines and 300 MiB without a newline each end with ``transport.output-bounded``
failing, every report written, and the checker's own peak RSS under 300 MiB, measured on a
real fixture agent process (``fixtures/hostile_agent.py``) by ``fixtures/rss_probe.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp_conformance.harness.limits import (
    MAX_LINE_BYTES,
    OVERSIZED_HEAD,
    Budgets,
    LineSplitter,
    OutputBudget,
)

from tests.checker.checks.conformance_checker_support import FIXTURES

HOSTILE_AGENT = FIXTURES / "hostile_agent.py"
RSS_PROBE = FIXTURES / "rss_probe.py"
#: The bound the issue sets for the checker's peak resident set, whatever the agent writes.
PEAK_RSS_KIB = 300 * 1024
#: A generous bound on one checker run against a fixture agent (a loaded 2-CPU machine).
RUN_BOUND = 420


def run_probe(mode: str, tmp_path: Path, *extra: str) -> tuple[int, int, dict[str, object]]:
    """(exit code, checker peak RSS in KiB, JSON report) of one checker run."""
    rss_file = tmp_path / "rss"
    report = tmp_path / "report.json"
    env = {**os.environ, "RSS_PROBE_OUT": str(rss_file)}
    argv = [sys.executable, str(RSS_PROBE), "run", "--timeout", "3", "--report-json", str(report)]
    argv += [*extra, "--", sys.executable, str(HOSTILE_AGENT), mode]
    done = subprocess.run(argv, env=env, capture_output=True, timeout=RUN_BOUND, check=False)
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-3000:]
    return done.returncode, int(rss_file.read_text()), json.loads(report.read_text())


def verdicts(report: dict[str, object]) -> dict[str, str]:
    requirements = report["requirements"]
    assert isinstance(requirements, list)
    return {r["id"]: r["verdict"] for r in requirements}


# -- the line splitter ----------------------------------------------------------------------


def test_lines_are_cut_at_newlines_across_chunks() -> None:
    splitter = LineSplitter(cap=100)
    lines = splitter.feed(b"one\ntw") + splitter.feed(b"o\nthree")
    assert [(line.data, line.terminated) for line in lines] == [(b"one", True), (b"two", True)]
    last = splitter.finish()
    assert last is not None and (last.data, last.terminated) == (b"three", False)
    assert splitter.finish() is None


def test_a_line_over_the_cap_keeps_only_its_head_and_its_length() -> None:
    splitter = LineSplitter(cap=OVERSIZED_HEAD * 2)
    body = b"x" * (OVERSIZED_HEAD * 3)
    lines = splitter.feed(body[:5000]) + splitter.feed(body[5000:] + b"\nnext\n")
    assert [line.size for line in lines] == [len(body), 4]
    assert lines[0].oversized and lines[0].data == body[:OVERSIZED_HEAD]
    assert not lines[1].oversized and lines[1].data == b"next"


def test_an_unfinished_line_over_the_cap_is_not_buffered() -> None:
    splitter = LineSplitter(cap=OVERSIZED_HEAD * 2)
    for _ in range(100):
        assert splitter.feed(b"y" * 1024) == []
    assert splitter.pending == 100 * 1024
    last = splitter.finish()
    assert last is not None and last.oversized and len(last.data) == OVERSIZED_HEAD


def test_the_run_budget_is_shared_by_every_process() -> None:
    shared = OutputBudget(frames=3, bytes=1000)
    first, second = Budgets(run=shared), Budgets(run=shared)
    assert first.admit(10) is None and second.admit(10) is None and first.admit(10) is None
    why = second.admit(10)
    assert why is not None and "run's budget of 3 lines" in why


def test_the_process_budget_counts_bytes_too() -> None:
    budgets = Budgets(process=OutputBudget(frames=100, bytes=50))
    assert budgets.admit(40) is None
    why = budgets.admit(20)
    assert why is not None and "process's budget" in why


# -- real agents, real pipes, measured memory -----------------------------------------------


#: The hostile agent's mode, and a rule that must still pass: the unread rest of an
#: oversized line is not also an unterminated line, the flood's lines are JSON.
CASES = {
    "flood": "transport.stdout-only-json",  # small valid lines without end
    "big-init": "transport.newline-terminated",  # a 20 MiB initialize answer
    "no-newline": "transport.newline-terminated",  # 300 MiB with no newline
}


@pytest.mark.subprocess
@pytest.mark.parametrize(("mode", "still_passes"), sorted(CASES.items()))
def test_output_over_the_bounds_ends_with_output_bounded_in_bounded_memory(
    mode: str, still_passes: str, tmp_path: Path
) -> None:
    code, peak, report = run_probe(mode, tmp_path)
    found = verdicts(report)
    assert code == 1 and report["exitCode"] == 1
    assert found["transport.output-bounded"] == "fail"
    assert found.get(still_passes, "pass") == "pass"
    print(f"{mode}: checker peak RSS {peak / 1024:.0f} MiB")
    assert peak <= PEAK_RSS_KIB


@pytest.mark.subprocess
def test_a_large_line_under_the_cap_is_read_and_judged(tmp_path: Path) -> None:
    assert MAX_LINE_BYTES > 3 * 1024 * 1024
    code, peak, report = run_probe(
        "big-line", tmp_path, "-k", "transport.", "-k", "schema.agent-messages-valid"
    )
    found = verdicts(report)
    assert found["transport.output-bounded"] == "pass"
    assert found["transport.stdout-only-json"] == "pass"
    assert code == 0
    assert peak <= PEAK_RSS_KIB
