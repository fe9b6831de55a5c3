"""A real ``iac-code acp`` with a configuration it cannot use says so in one line and exits 2
before answering the editor's ``initialize`` (issue 32, item 2); an unknown key is one warning
and the agent serves. The in-memory cases are in tests/agent/settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.process.stdio_harness import agent_environment, run_agent

pytestmark = pytest.mark.subprocess

_INITIALIZE = (
    json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    )
    + "\n"
).encode()


def _start(env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[bytes]:
    """``iac-code acp`` (the editors' fast path without flags) sent an initialize request."""
    return subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "acp", *flags],
        input=_INITIALIZE,
        capture_output=True,
        env=env,
        timeout=60,
    )


def _refused(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 2
    assert done.stdout == b""  # initialize was not answered
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_non_utf8_config_stops_the_fast_path_before_initialize(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_bytes(b'model = "caf\xe9"\n')
    said = _refused(_start(agent_environment(tmp_path, None)))
    assert said == (
        f"iac-code: {tmp_path / 'config.toml'} is not UTF-8 text (byte 0xe9 on line 1);"
        " save it as UTF-8"
    )


def test_a_wrong_type_stops_the_agent_with_flags_too(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("max_tokens = 1.5\n", encoding="utf-8")
    said = _refused(_start(agent_environment(tmp_path, None), "--log-level", "ERROR"))
    assert said == (
        f"iac-code: {tmp_path / 'config.toml'}: max_tokens must be a whole number of at"
        " least 1, not 1.5 (a number)"
    )


def test_a_malformed_base_url_in_the_environment_is_refused_at_start(tmp_path: Path) -> None:
    env = agent_environment(tmp_path, None)
    env["ANTHROPIC_BASE_URL"] = "localhost:4000"
    said = _refused(_start(env))
    assert said == (
        "iac-code: environment variable ANTHROPIC_BASE_URL 'localhost:4000' does not start"
        " with http:// or https://; it must be a URL like https://api.anthropic.com"
    )


def test_an_unknown_key_is_one_warning_and_the_agent_serves(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('modle = "claude-x"\n', encoding="utf-8")
    stderr = tmp_path / "stderr.txt"
    with run_agent(agent_environment(tmp_path, None), stderr_path=stderr) as agent:
        assert agent.initialize()["protocolVersion"] == 1
        assert agent.call("session/list", {}).result == {"sessions": []}
        agent.close_stdin()
        assert agent.wait_exit() == 0
    said = [line for line in stderr.read_text().splitlines() if "modle" in line]
    assert said == [
        f"iac-code: warning: {tmp_path / 'config.toml'}: unknown key 'modle' is ignored"
        " (did you mean 'model'?)"
    ]
