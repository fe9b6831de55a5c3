"""The JSON, JUnit and HTML reports are well-formed and carry what a reader needs; the
baseline turns known failures into expected ones and flags stale entries."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from acp_conformance import baseline
from acp_conformance.catalogue import REQUIREMENTS
from acp_conformance.cli import main
from acp_conformance.config import UsageError
from acp_conformance.outcomes import Verdict
from acp_conformance.report import (
    github_annotations,
    html_report,
    json_report,
    junit_report,
    terminal,
)
from acp_conformance.run_result import RunResult

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker


@pytest.fixture(scope="module")
def failing_run() -> RunResult:
    return run_checker(raw_agent("--defect", "echo-version"), only=["init", "transport"])


@pytest.mark.subprocess
def test_json_report_has_every_requirement_and_failure_transcripts(
    failing_run: RunResult, tmp_path: Path
) -> None:
    path = tmp_path / "report.json"
    json_report.write(failing_run, path)
    data = json.loads(path.read_text())
    assert data["format"] == "acp-conformance-report"
    assert data["status"] == "not-conformant" and data["exitCode"] == 1
    assert data["agent"]["command"] == failing_run.config.argv
    ids = {r["id"] for r in data["requirements"]}
    assert ids == set(failing_run.results)
    failure = next(
        r for r in data["requirements"] if r["id"] == "init.unsupported-version-not-echoed"
    )
    assert failure["verdict"] == "fail" and failure["tier"] == "MUST"
    transcript = failure["outcomes"][0]["transcript"]
    assert any('"protocolVersion":65535' in f["line"] for f in transcript["frames"])
    # Where the time went: every scenario check says how long it took.
    scenario_outcomes = [o for r in data["requirements"] for o in r["outcomes"] if o.get("runId")]
    assert scenario_outcomes and all(o["seconds"] >= 0 for o in scenario_outcomes)
    # And what it cost: the fixture agents were started, answered and reaped, so their CPU
    # is on record (each Python start costs some), as is the checker's own.
    cpu = data["cpuSeconds"]
    assert cpu["agents"] > 0 and cpu["checker"] > 0, cpu


@pytest.mark.subprocess
def test_junit_report_has_one_testcase_per_requirement(
    failing_run: RunResult, tmp_path: Path
) -> None:
    path = tmp_path / "junit.xml"
    junit_report.write(failing_run, path)
    root = ET.parse(path).getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == len(failing_run.results)
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == ["init.unsupported-version-not-echoed"]
    # Echoing the requested version also breaks the version-0 rule, a SHOULD: reported as
    # a skip that says so, not as a failure (it does not block the verdict).
    zero = root.find(".//testcase[@name='init.version-zero']/skipped")
    assert zero is not None and (zero.get("message") or "").startswith("[SHOULD] failed")


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.external: list[str] = []
        self.rows = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "tr" and "req" in (values.get("class") or ""):
            self.rows += 1
        for key in ("src", "href"):
            if values.get(key):
                self.external.append(str(values[key]))


@pytest.mark.subprocess
def test_html_report_is_self_contained_with_a_row_per_requirement(
    failing_run: RunResult, tmp_path: Path
) -> None:
    path = tmp_path / "report.html"
    html_report.write(failing_run, path)
    parser = _Collector()
    parser.feed(path.read_text())
    assert parser.external == []
    assert parser.rows == len(failing_run.results)
    assert "<details" in path.read_text()
    # Failures first: the failing requirement's row precedes every passing one.
    text = path.read_text()
    rows = [part.split("</code>", 1)[0] for part in text.split('<tr class="req"')[1:]]
    first = rows[0].rsplit("<code>", 1)[1]
    assert first == "init.unsupported-version-not-echoed"


@pytest.mark.subprocess
def test_terminal_report_groups_by_area_and_ends_with_the_verdict(failing_run: RunResult) -> None:
    text = terminal.render(failing_run, width=120)
    assert text.splitlines()[-1].startswith("NOT CONFORMANT: 1 MUST failure")
    assert "\ninit\n" in text and "\ntransport\n" in text


@pytest.mark.subprocess
def test_baseline_makes_known_failures_expected_and_passes_stale(failing_run: RunResult) -> None:
    baseline.apply(
        failing_run,
        {"init.unsupported-version-not-echoed": "known bug", "init.responds": "old bug"},
    )
    try:
        assert failing_run.results["init.unsupported-version-not-echoed"].baseline == "expected"
        assert failing_run.results["init.responds"].baseline == "stale"
        assert failing_run.blocking_failures == []
        assert failing_run.exit_code == 1  # the stale entry fails the run
        assert "stale" in failing_run.verdict_line()
    finally:
        for item in failing_run.results.values():
            item.baseline = item.baseline_reason = None


def test_baseline_entries_need_known_ids_and_reasons() -> None:
    some_id = next(iter(REQUIREMENTS))
    assert baseline.parse({"expectedFailures": {some_id: "why"}}) == {some_id: "why"}
    with pytest.raises(UsageError):
        baseline.parse({"expectedFailures": [{"id": some_id}]})
    with pytest.raises(UsageError):
        baseline.parse({"expectedFailures": [{"id": "no.such-thing", "reason": "x"}]})


def test_report_verdicts_cover_the_four_kinds() -> None:
    assert {v.value for v in Verdict} == {"pass", "fail", "not-applicable", "harness-error"}


@pytest.mark.subprocess
def test_junit_report_has_the_shape_ci_report_viewers_read(
    failing_run: RunResult, tmp_path: Path
) -> None:
    path = tmp_path / "junit.xml"
    junit_report.write(failing_run, path)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    # One suite per requirement area, whose counts add up to the root's.
    areas = {item.requirement.area for item in failing_run.results.values()}
    assert {suite.get("name") for suite in suites} == areas
    for key in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(key, "-1")) == sum(int(s.get(key, "-1")) for s in suites)
    for case in root.iter("testcase"):
        assert case.get("classname", "").startswith("acp.") and case.get("name")
        failure = case.find("failure")
        if failure is not None:
            tier = failing_run.results[case.get("name", "")].requirement.tier.value
            assert failure.get("message", "").startswith(f"[{tier}]")
    not_applicable = [
        r for r in failing_run.results.values() if r.verdict.value == "not-applicable"
    ]
    assert int(root.get("skipped", "0")) >= len(not_applicable)


@pytest.mark.subprocess
def test_github_format_prints_failures_as_workflow_annotations(failing_run: RunResult) -> None:
    lines = github_annotations.render(failing_run).splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    warnings = [line for line in lines if line.startswith("::warning ")]
    # MUST failures fail the job; a SHOULD failure is a warning.
    assert [line.split("::")[1] for line in errors] == [
        "error title=init.unsupported-version-not-echoed [MUST]"
    ]
    assert [line.split("::")[1] for line in warnings] == [
        "warning title=init.version-zero [SHOULD]"
    ]
    # A workflow command is one line: the message's own newlines and % are escaped.
    assert all("\n" not in line for line in lines)
    assert lines[-1] == f"::notice title=acp-conformance::{failing_run.verdict_line()}"


def test_github_annotation_escaping() -> None:
    from acp_conformance.report.github_annotations import _command

    line = _command("warning", "a:b,c", "50% done\nnext line")
    assert line == "::warning title=a%3Ab%2Cc::50%25 done%0Anext line"


@pytest.mark.subprocess
def test_validate_given_a_report_says_so_in_one_line(
    failing_run: RunResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A report handed to ``validate`` instead of a transcript: one line and exit 2, not an
    "invalid JSON" problem for each of its thousands of lines."""
    path = tmp_path / "report.json"
    json_report.write(failing_run, path)
    assert len(path.read_text().splitlines()) > 100
    assert main(["validate", str(path)]) == 2
    shown = capsys.readouterr()
    assert shown.out == ""
    lines = shown.err.strip().splitlines()
    assert len(lines) == 1, shown.err
    assert "this is an acp-conformance report" in lines[0]
    assert "not a transcript" in lines[0] and str(path) in lines[0]
