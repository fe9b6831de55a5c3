"""The README's main-job command really runs a session end to end, offline."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.subprocess
def test_demo_writes_the_file_and_replays_the_session() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "iac_code_dev.cli", "demo"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "main.tf written: True" in done.stdout
    assert '"sessionUpdate": "tool_call"' in done.stdout
    assert "session/request_permission" in done.stdout
    assert done.stdout.rstrip().endswith("# demo succeeded")
