"""``iac-code acp`` started by hand in a terminal says in one stderr line what it is and how
to try it, then serves as usual; started by an editor (stdin a pipe) it says nothing
(issue 32, item 5)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from iac_code.cli import TERMINAL_NOTICE

from tests.agent.process.stdio_harness import agent_environment, run_agent

pytestmark = pytest.mark.subprocess


def _first_stderr_line(process: subprocess.Popen[bytes], timeout: float) -> bytes:
    assert process.stderr is not None
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([process.stderr], [], [], timeout)
        assert ready, f"no stderr line within {timeout} s: {line!r}"
        chunk = os.read(process.stderr.fileno(), 4096)
        assert chunk, f"stderr closed after {line!r}"
        line += chunk
    return line


@pytest.mark.parametrize("flags", [[], ["--log-level", "WARNING"]], ids=["fast-path", "flags"])
def test_on_a_terminal_it_says_what_it_is_then_serves(tmp_path: Path, flags: list[str]) -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "iac_code.cli", "acp", *flags],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=agent_environment(tmp_path, None),
    )
    os.close(terminal)
    try:
        said = _first_stderr_line(process, 60).decode()
        assert said == TERMINAL_NOTICE + "\n"
        assert "Agent Client Protocol (JSON-RPC" in said and "stdin/stdout" in said
        assert "acp-conformance run" in said
        # It goes on serving: an initialize typed on the terminal is answered.
        os.write(
            controller,
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n',
        )
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready
        assert b'"protocolVersion":1' in os.read(process.stdout.fileno(), 65536)
    finally:
        process.kill()
        process.wait(timeout=60)
        os.close(controller)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        process.stderr.close()


def test_started_by_an_editor_it_says_nothing(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.txt"
    with run_agent(agent_environment(tmp_path, None), stderr_path=stderr) as agent:
        assert agent.initialize()["protocolVersion"] == 1
        agent.close_stdin()
        assert agent.wait_exit() == 0
    assert stderr.read_text() == ""
