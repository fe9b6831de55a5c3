"""Hostile bytes from an agent (issue 34, items 2 and 13): a lone surrogate, a line nested
200,000 deep and terminal escape sequences are judged as the agent's wire defect; the run
goes on, every report is written, and nothing the agent sent reaches the terminal raw."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from acp_conformance.cli import main
from acp_conformance.harness.limits import MAX_DEPTH
from acp_conformance.harness.recorder import NOT_JSON, parse_line
from acp_conformance.report.terminal_safe import printable

from tests.checker.checks.conformance_checker_support import FIXTURES

HOSTILE_AGENT = FIXTURES / "hostile_agent.py"


def test_a_line_nested_200000_deep_is_not_json_with_the_reason() -> None:
    value, why = parse_line(b"[" * 200_000 + b"]" * 200_000)
    assert value is NOT_JSON and why is not None and f"{MAX_DEPTH} levels" in why


def test_nesting_past_the_limit_that_the_parser_accepts_is_caught_too() -> None:
    deep = b'{"a":' * (MAX_DEPTH + 5) + b"1" + b"}" * (MAX_DEPTH + 5)
    assert parse_line(deep)[0] is NOT_JSON
    ordinary = b'{"a":' * 20 + b"[1,{}]" + b"}" * 20
    assert parse_line(ordinary)[1] is None


def test_a_lone_surrogate_is_not_json_but_a_surrogate_pair_is() -> None:
    value, why = parse_line(b'{"text":"bad \\ud800 here"}')
    assert value is NOT_JSON and why is not None and "lone surrogate" in why
    value, why = parse_line(b'{"text":"ok \\ud83d\\ude00"}')
    assert why is None and value == {"text": "ok \U0001f600"}


def test_printable_escapes_every_control_but_newline_and_tab() -> None:
    text = "evil\x1b]0;pwned\x07\x1b[2J\rCONFORMANT\x9b\u2028 \ud800\nnext\tcell"
    shown = printable(text)
    assert shown == (
        "evil\\x1b]0;pwned\\x07\\x1b[2J\\x0dCONFORMANT\\x9b\\u2028 \\ud800\nnext\tcell"
    )
    shown.encode("utf-8")  # printable on any UTF-8 terminal


def run_cli(mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    reports = [
        ("--report-json", tmp_path / "report.json"),
        ("--html", tmp_path / "report.html"),
        ("--junit", tmp_path / "report.xml"),
    ]
    argv = ["run", "--timeout", "3"]
    for flag, path in reports:
        argv += [flag, str(path)]
    code = main([*argv, "--", sys.executable, str(HOSTILE_AGENT), mode])
    for _, path in reports:
        assert path.stat().st_size > 0, path
    return code, capsys.readouterr().out


@pytest.mark.subprocess
@pytest.mark.parametrize("mode", ["surrogate", "deep"])
def test_hostile_lines_are_the_agents_defect_and_every_report_is_written(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_cli(mode, tmp_path, capsys)
    assert code == 1  # not conformant: the agent's defect, not the checker's fault (3)
    report = json.loads((tmp_path / "report.json").read_text())
    verdicts = {r["id"]: r["verdict"] for r in report["requirements"]}
    assert verdicts["transport.stdout-only-json"] == "fail"
    assert "harness-error" not in verdicts.values()
    assert "NOT CONFORMANT" in out


@pytest.mark.subprocess
def test_the_agents_escape_sequences_never_reach_the_terminal_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _code, out = run_cli("escapes", tmp_path, capsys)
    assert "evil\\x1b]0;pwned\\x07" in out  # shown, escaped
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out


@pytest.mark.subprocess
def test_a_report_the_checker_fails_to_write_is_its_own_fault_and_the_others_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp_conformance.report import json_report

    def broken(*_args: object) -> None:
        raise RuntimeError("a checker bug")

    monkeypatch.setattr(json_report, "write", broken)
    html = tmp_path / "report.html"
    argv = ["run", "--timeout", "3", "-k", "transport.utf8", "--report-json"]
    argv += [str(tmp_path / "report.json"), "--html", str(html)]
    code = main([*argv, "--", sys.executable, str(FIXTURES / "raw_agent.py")])
    assert code == 3
    assert html.stat().st_size > 0
