"""Bad flags are a one-line usage error; an unusable ``--home`` answers clearly (item 14)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.process.stdio_harness import agent_environment, run_agent

pytestmark = pytest.mark.subprocess


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--max-line-bytes", "-1"], "--max-line-bytes"),
        (["--max-line-bytes", "lots"], "--max-line-bytes"),
        (["--max-turn-requests", "0"], "--max-turn-requests"),
        (["--log-level", "LOUD"], "--log-level"),
        (["--transport", "http", "--body-timeout", "0"], "--body-timeout"),
        (["--transport", "http", "--body-timeout", "nan"], "--body-timeout"),
        (["--transport", "http", "--max-body-buffer-mib", "lots"], "--max-body-buffer-mib"),
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
    with run_agent(env, "--home", str(home), stderr_path=stderr) as agent:
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


def test_a_bad_log_level_in_the_environment_is_said_once_and_the_agent_serves(
    tmp_path: Path,
) -> None:
    # An editor starts the agent with whatever environment it has: a typo there must not
    # stop the agent, and must not pass silently either.
    env = agent_environment(tmp_path, None)
    env["IAC_CODE_LOG_LEVEL"] = "LOUD"
    stderr = tmp_path / "stderr.txt"
    with run_agent(env, stderr_path=stderr) as agent:
        assert agent.initialize()["protocolVersion"] == 1
        assert agent.call("session/list", {}).result == {"sessions": []}
        agent.close_stdin()
        assert agent.wait_exit() == 0
    said = [line for line in stderr.read_text().splitlines() if "IAC_CODE_LOG_LEVEL" in line]
    assert len(said) == 1, said
    assert "'LOUD' is not one of DEBUG, INFO, WARNING, ERROR; using WARNING" in said[0]


def test_log_level_settings_from_env_config_and_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from iac_code.cli import acp_settings, build_parser
    from iac_code.settings import load_settings

    assert load_settings({"IAC_CODE_HOME": str(tmp_path), "IAC_CODE_LOG_LEVEL": "info"}) == (
        load_settings({"IAC_CODE_HOME": str(tmp_path), "IAC_CODE_LOG_LEVEL": "INFO"})
    )
    (tmp_path / "config.toml").write_text('log_level = "chatty"\n')
    from_config = load_settings({"IAC_CODE_HOME": str(tmp_path)})
    assert from_config.log_level == "WARNING"
    assert from_config.log_level_warning is not None
    assert "log_level in config.toml='chatty'" in from_config.log_level_warning
    monkeypatch.setenv("IAC_CODE_LOG_LEVEL", "LOUD")
    monkeypatch.setenv("IAC_CODE_HOME", str(tmp_path))
    without_flag = acp_settings(build_parser().parse_args(["acp"]))
    assert without_flag.log_level_warning is not None
    args = build_parser().parse_args(["acp", "--log-level", "error"])
    chosen = acp_settings(args)  # the flag wins, and the bad value no longer matters
    assert (chosen.log_level, chosen.log_level_warning) == ("ERROR", None)
