"""Bad flags are a one-line usage error; an unusable ``--home`` answers clearly (item 14)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from stdio_harness import AgentProcess, agent_environment

pytestmark = pytest.mark.subprocess


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--max-line-bytes", "-1"], "--max-line-bytes"),
        (["--max-line-bytes", "lots"], "--max-line-bytes"),
        (["--max-turn-requests", "0"], "--max-turn-requests"),
        (["--log-level", "LOUD"], "--log-level"),
        (["--no-such-flag"], "--no-such-flag"),
    ],
)
def test_a_bad_flag_is_a_one_line_usage_error(tmp_path: Path, flags: list[str], named: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "acp", *flags],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=agent_environment(tmp_path, None),
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stdout == b""  # nothing that a client could mistake for a message
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("iac-code") and named in lines[0]
    assert "Traceback" not in lines[0]


def test_log_level_is_case_insensitive(tmp_path: Path) -> None:
    from iac_code.cli import acp_settings, build_parser

    args = build_parser().parse_args(["acp", "--log-level", "debug", "--home", str(tmp_path)])
    assert acp_settings(args).log_level == "DEBUG"


def test_a_home_that_cannot_be_created_answers_clearly_and_stays_up(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    home = blocker / "home"  # unwritable even for root: its parent is a regular file
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = agent_environment(tmp_path, None)
    stderr = tmp_path / "stderr.txt"
    with AgentProcess(env, "--home", str(home), stderr_path=stderr) as agent:
        agent.initialize()
        reply = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []})
        error = reply.error
        assert error["code"] == -32603
        assert error["message"] == (
            "The session store cannot be written: a part of the path is not a directory."
        )
        assert error["data"]["errno"] == "ENOTDIR"
        assert str(home) in error["data"]["store"]
        assert agent.call("session/list", {}).result == {"sessions": []}
        agent.close_stdin()
        assert agent.wait_exit() == 0
    assert "Traceback" not in stderr.read_text()
