"""Reference material: one setting names the newest upstream; missing files skip or fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp_schema import reference

PROJECT_ROOT = Path(__file__).resolve().parents[3]


def test_newest_upstream_is_one_setting_apart_from_history() -> None:
    assert reference.newest_upstream("v1").as_posix().endswith("acp-npm-sdk-2.4.0/v1/schema.json")
    assert reference.newest_upstream("v2").as_posix().endswith("acp-npm-sdk-2.4.0/v2/schema.json")
    assert not set(reference.HISTORY.values()) & set(reference.NEWEST_UPSTREAM.values())


def test_a_missing_file_skips_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(reference.REQUIRED_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="reference material not found"):
        reference.require(tmp_path / "absent.json")


def test_a_missing_file_fails_when_required(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(reference.REQUIRED_ENV, "1")
    expected = "ACP_REFERENCE_REQUIRED=1 but reference material not found"
    with pytest.raises(pytest.fail.Exception, match=expected):
        reference.require(tmp_path / "absent.json")


def test_present_files_pass(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(reference.REQUIRED_ENV, "1")
    present = tmp_path / "schema.json"
    present.write_text("{}", encoding="utf-8")
    reference.require(present)


def _run_reference_tests(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ACP_REFERENCE")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",  # one file: no worker processes
            "-rs",  # list the skip reasons
            "tests/bindings/schema_drift/test_schema_drift_reference.py",
        ],
        cwd=PROJECT_ROOT,
        env=environment | env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_reference_tests_fail_loudly_when_required_and_absent(tmp_path: Path) -> None:
    absent = str(tmp_path / "no-reference")
    skipped = _run_reference_tests(ACP_REFERENCE_DIR=absent)
    assert skipped.returncode == 0, skipped.stdout
    assert "skipped" in skipped.stdout and "failed" not in skipped.stdout
    # One line for all of them, saying what to fetch and how.
    reasons = [line for line in skipped.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(reasons) == 1, reasons
    assert "python -m acp_schema.upstream --sdk" in reasons[0]
    failed = _run_reference_tests(ACP_REFERENCE_DIR=absent, ACP_REFERENCE_REQUIRED="1")
    assert failed.returncode == 1, failed.stdout
    assert "ACP_REFERENCE_REQUIRED=1 but reference material not found" in failed.stdout
    assert "skipped" not in failed.stdout
