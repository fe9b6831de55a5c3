"""``iac-code-dev demo --iac`` runs one IaC turn end to end, offline, as a transcript."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.subprocess
def test_the_iac_demo_shows_diff_findings_and_a_refused_apply() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "iac_code_dev.cli", "demo", "--iac"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-2000:]
    assert "tool call: Read modules/logs/main.tf [read]" in out
    assert "diff of " in out and "+   bucket = aws_s3_bucket.logs.id" in out
    assert 'undeclared input variable "retention_days"' in out
    assert "permission asked: Changes real infrastructure: terraform -chdir=modules/logs" in out
    assert "options: allow_once, reject_once -> the user chooses reject_once" in out
    assert "Not run: this command changes real infrastructure (terraform apply)" in out
    assert out.rstrip().endswith("# demo succeeded")
