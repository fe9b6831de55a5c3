"""The command line: exit codes, list, validate, and a real end-to-end run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from acp_conformance.catalogue import REQUIREMENTS
from acp_conformance.cli import main

from tests.checker.checks.conformance_checker_support import RAW_AGENT, raw_agent, run_checker

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
    assert good.stdout.strip().splitlines()[-1].startswith("CONFORMANT — ")
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


def _write_plain(path: Path, messages: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))


def test_validate_keeps_the_two_directions_request_ids_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # acpx-style: plain messages, and each side numbers its own requests, so the agent's
    # permission request reuses the id of the client's running prompt.
    path = tmp_path / "acpx.jsonl"
    prompt = {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}
    permission = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": "write"},
        "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
    }
    _write_plain(
        path,
        [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
            {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}},
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": "/w", "mcpServers": []},
            },
            {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/request_permission",
                "params": permission,
            },
            {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"outcome": {"outcome": "selected", "optionId": "a"}},
            },
            {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}},
        ],
    )
    assert main(["validate", str(path)]) == 0, capsys.readouterr().out
    assert "0 problems" in capsys.readouterr().out


def test_validate_notes_but_does_not_fail_other_agents_error_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "other.jsonl"
    _write_plain(
        path,
        [
            {"jsonrpc": "2.0", "id": 5, "method": "session/nope", "params": {}},
            {
                "jsonrpc": "2.0",
                "id": 5,
                "error": {"code": -32601, "message": "Method not found", "data": "session/nope"},
            },
        ],
    )
    assert main(["validate", str(path)]) == 0
    assert "0 problems" in capsys.readouterr().out


def test_k_that_selects_nothing_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-k", "no-such-requirement-xyz", "--", "true"]) == 2
    assert "selects no requirement" in capsys.readouterr().err
    assert main(["list", "-k", "no-such-requirement-xyz"]) == 2


def test_version_and_profiles_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert "acp-conformance" in capsys.readouterr().out
    assert main(["run", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "acp" in help_text and "iac-code" in help_text and "--tools" in help_text


@pytest.mark.subprocess
def test_run_says_where_each_report_was_written(tmp_path: Path) -> None:
    report, html = tmp_path / "r.json", tmp_path / "r.html"
    done = subprocess.run(
        [
            *CLI,
            "run",
            "--timeout",
            "3",
            "-k",
            "init.responds",
            "--report-json",
            str(report),
            "--html",
            str(html),
            "--",
            sys.executable,
            str(RAW_AGENT),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"wrote {report}" in done.stderr and f"wrote {html}" in done.stderr
    # Without a terminal: the header comes first, then one line per area.
    assert done.stderr.splitlines()[0].startswith("acp-conformance ")
    assert any(line.strip().startswith("init ") for line in done.stderr.splitlines())
