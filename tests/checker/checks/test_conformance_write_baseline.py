"""``run --write-baseline``: the run's failures become a baseline that ``--baseline`` reads
once a maintainer has replaced each placeholder reason; and a run leaves no files behind in
the directory it was started from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp_conformance import baseline
from acp_conformance.config import UsageError

from tests.checker.checks.conformance_checker_support import RAW_AGENT

CLI = [sys.executable, "-m", "acp_conformance.cli", "run", "--timeout", "3"]
FAILING = "init.unsupported-version-not-echoed"


def _run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
        check=False,
    )


@pytest.mark.subprocess
def test_written_baseline_needs_reasons_then_makes_the_run_pass(tmp_path: Path) -> None:
    written = tmp_path / "baseline.json"
    agent = ["--", sys.executable, str(RAW_AGENT), "--defect", "echo-version"]
    only = ["--only", FAILING]
    first = _run(*only, "--write-baseline", str(written), *agent, cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "wrote 1 expected failures" in first.stderr
    entries = json.loads(written.read_text())["expectedFailures"]
    assert entries == [{"id": FAILING, "reason": baseline.PLACEHOLDER_REASON}]

    refused = _run(*only, "--baseline", str(written), *agent, cwd=tmp_path)
    assert refused.returncode == 2
    assert "placeholder reason" in refused.stderr

    written.write_text(
        json.dumps({"expectedFailures": [{"id": FAILING, "reason": "fixture bug #1"}]})
    )
    again = tmp_path / "again.json"
    accepted = _run(
        *only, "--baseline", str(written), "--write-baseline", str(again), *agent, cwd=tmp_path
    )
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    # Rewriting keeps the reasons the maintainer already wrote.
    assert json.loads(again.read_text())["expectedFailures"] == [
        {"id": FAILING, "reason": "fixture bug #1"}
    ]


def test_failures_render_in_registry_order_and_parse_back() -> None:
    entries = {"session.new-returns-id": "b", "transport.utf8": "a"}
    text = baseline.render(entries)
    ids = [e["id"] for e in json.loads(text)["expectedFailures"]]
    assert ids == ["transport.utf8", "session.new-returns-id"]
    assert baseline.parse(json.loads(text)) == entries
    with pytest.raises(UsageError, match="placeholder"):
        baseline.parse({"expectedFailures": {"transport.utf8": baseline.PLACEHOLDER_REASON}})


@pytest.mark.subprocess
def test_a_fuzzing_run_leaves_no_hypothesis_directory_in_the_cwd(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    done = _run(
        "--only",
        "robustness.fuzz-valid-params",
        "--fuzz-examples",
        "1",
        "--",
        sys.executable,
        str(RAW_AGENT),
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tmp_path / ".hypothesis").exists()
    assert (tmp_path / "cache" / "acp-conformance" / "hypothesis").is_dir()
