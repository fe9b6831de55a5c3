"""acpx writes a new file for the agent without reporting an error.

acpx advertises ``fs.readTextFile`` and answers a read of a missing file with -32002
("Resource not found"), which it also prints as an error. The agent must not read a file it is
about to create through the client. Runs when ``acpx`` is on PATH or named by ``ACPX`` (see
/work/shared/peers.md: acpx 0.19.1 needs Node 22); skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn

ACPX = os.environ.get("ACPX") or shutil.which("acpx")
TIMEOUT = 90.0

pytestmark = pytest.mark.skipif(ACPX is None, reason="acpx is not installed")


def test_acpx_sees_no_error_when_the_agent_creates_a_file(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    turns = [
        Turn().tool_use("write_file", {"path": "new.tf", "content": "# new\n"}, id="w1").to_dict(),
        Turn().text("done").to_dict(),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "IAC_CODE_"))}
    agent = f"{sys.executable} -m iac_code.cli acp"
    with ScriptedLLMServer(turns) as llm:
        env.update(
            HOME=str(home),
            IAC_CODE_HOME=str(home / "iac"),
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=llm.url,
        )
        assert ACPX is not None
        argv = [ACPX, "--approve-all", "--format", "json", "--cwd", str(workspace)]
        done = subprocess.run(
            [*argv, "--agent", agent, "exec", "write new.tf"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    frames = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    errors = [f for f in frames if "error" in f]
    assert errors == [], errors
    assert "not found" not in (done.stdout + done.stderr).lower()
    assert [f for f in frames if f.get("method") == "fs/read_text_file"] == []
    assert (workspace / "new.tf").read_text() == "# new\n"
