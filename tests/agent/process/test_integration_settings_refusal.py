"""A configuration found unusable only after ``initialize`` was answered gets a JSON-RPC error
for every request, not a traceback (issue 32, item 2). The start-up check catches nearly every
case before any answer; this is the race where the file changes in between, forced here by a
``make_settings`` that raises."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.subprocess

_SCRIPT = """
import sys
from iac_code.prelude import run_acp
from iac_code.settings_core import SettingsError

def unusable():
    raise SettingsError("/home/x/config.toml: max_tokens must be a whole number of at least 1")

sys.exit(run_acp(unusable))
"""


def _line(message: dict[str, object]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode()


def test_requests_after_initialize_get_a_clear_error_and_the_process_exits_2() -> None:
    requests = b"".join(
        [
            _line({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
            _line({"id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
            _line({"method": "session/cancel", "params": {"sessionId": "s"}}),
            b"not json\n",
            _line({"id": "three", "method": "session/list", "params": {}}),
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], input=requests, capture_output=True, timeout=60
    )
    assert done.returncode == 2
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["id"] == 1 and answers[0]["result"]["protocolVersion"] == 1
    expected = (
        "iac-code cannot run with its configuration: /home/x/config.toml: max_tokens must be"
        " a whole number of at least 1"
    )
    assert answers[1:] == [
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": expected}},
        {"jsonrpc": "2.0", "id": "three", "error": {"code": -32603, "message": expected}},
    ]
    stderr = done.stderr.decode()
    assert "Traceback" not in stderr
    assert stderr.splitlines() == [
        "iac-code: /home/x/config.toml: max_tokens must be a whole number of at least 1"
    ]
