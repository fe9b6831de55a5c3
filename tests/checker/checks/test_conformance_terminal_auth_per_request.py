"""gating.terminal-auth-advertised judges each initialize answer by its own request.

The fuzzer initializes one agent several times with different capabilities (one of its
drawn requests sets ``clientCapabilities.auth.terminal: true``); an agent that offers the
terminal login to exactly that request is right, and one that offers it to a request
without the flag is still caught.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_conformance.config import RunConfig
from acp_conformance.harness.client_side import ClientSide
from acp_conformance.harness.recorder import Recorder
from acp_conformance.judges.consistency import terminal_auth_only_for_capable_clients
from acp_conformance.outcomes import Verdict
from acp_conformance.scenarios.check_context import AgentRun, RunRecord

TERMINAL = {"id": "login", "name": "Log in", "type": "terminal", "args": ["--login"]}
ENV_VAR = {"id": "key", "name": "API key"}


def _record(tmp_path: Path, exchanges: list[tuple[dict[str, Any], list[Any]]]) -> RunRecord:
    recorder = Recorder()
    for number, (capabilities, methods) in enumerate(exchanges, start=1):
        params = {"protocolVersion": 1, "clientCapabilities": capabilities}
        request = {"jsonrpc": "2.0", "id": number, "method": "initialize", "params": params}
        recorder.add("c2a", json.dumps(request).encode())
        result = {"protocolVersion": 1, "authMethods": methods}
        recorder.add("a2c", json.dumps({"jsonrpc": "2.0", "id": number, "result": result}).encode())
    run = AgentRun("fuzz#1", "fuzz", recorder, ClientSide(tmp_path))
    return RunRecord(RunConfig(argv=["agent"]), [run])


def test_terminal_login_offered_only_to_the_request_that_asked_passes(tmp_path: Path) -> None:
    record = _record(
        tmp_path,
        [({}, [ENV_VAR]), ({"auth": {"terminal": True}}, [ENV_VAR, TERMINAL]), ({}, [ENV_VAR])],
    )
    [outcome] = terminal_auth_only_for_capable_clients(record)
    assert outcome.verdict is Verdict.PASS, outcome.reason


def test_terminal_login_offered_to_a_request_that_did_not_ask_fails(tmp_path: Path) -> None:
    record = _record(
        tmp_path,
        [({"auth": {"terminal": True}}, [ENV_VAR, TERMINAL]), ({}, [ENV_VAR, TERMINAL])],
    )
    [outcome] = terminal_auth_only_for_capable_clients(record)
    assert outcome.verdict is Verdict.FAIL
    assert "without clientCapabilities.auth.terminal" in outcome.reason
