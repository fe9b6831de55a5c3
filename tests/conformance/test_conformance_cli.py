"""The command line: exit codes, list, validate, and a real end-to-end run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from acp_conformance.cli import main
from acp_conformance.requirements import REQUIREMENTS
from conformance_checker_support import RAW_AGENT, raw_agent, run_checker

CLI = [sys.executable, "-m", "acp_conformance.cli"]


def test_run_without_an_agent_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--timeout", "2"]) == 2
    assert "missing agent command" in capsys.readouterr().err


def test_unknown_profile_is_a_usage_error() -> None:
    assert main(["run", "--tools", "nope", "--", "true"]) == 2


def test_list_prints_every_requirement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(req_id in out for req_id in REQUIREMENTS)


@pytest.mark.subprocess
def test_run_exit_codes_follow_the_verdict(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    common = ["run", "--timeout", "3", "--only", "init.*version*"]
    good = subprocess.run(
        [*CLI, *common, "--report-json", str(report), "--", sys.executable, str(RAW_AGENT)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.strip().splitlines()[-1] == "CONFORMANT"
    assert json.loads(report.read_text())["status"] == "conformant"
    bad = subprocess.run(
        [*CLI, *common, "--", sys.executable, str(RAW_AGENT), "--defect", "echo-version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1
    assert "NOT CONFORMANT" in bad.stdout


def _write_transcript(path: Path, frames: list[tuple[str, dict[str, object]]]) -> None:
    path.write_text("".join(json.dumps({"dir": d, "msg": m}) + "\n" for d, m in frames))


@pytest.mark.subprocess
def test_validate_accepts_a_recorded_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_checker(raw_agent(), only=["session.new-returns-id", "prompt.text-accepted"])
    run = next(r for r in result.runs if r.scenario == "sessions")
    path = tmp_path / "session.jsonl"
    _write_transcript(path, [(f.direction, f.message) for f in run.frames if f.is_json])
    assert main(["validate", str(path)]) == 0
    assert "0 problems" in capsys.readouterr().out


def test_validate_reports_a_schema_violation_by_the_requests_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": "/w", "mcpServers": []},
    }
    path.write_text(
        json.dumps(request)
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"modes": None}})
        + "\n"
    )
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "a2c session/new result" in out and "sessionId" in out
