"""gating.terminal-auth-advertised judges each initialize answer against its own request.

A process may be initialized several times (the fuzzer sends many ``initialize`` requests to
one agent); an answer that offers terminal auth to the request that asked for it is right even
when an earlier initialize of the same process did not ask. The quick start once failed our own
agent on exactly that: a drawn initialize with ``auth.terminal: true`` after one without it."""

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

TERMINAL = {"id": "terminal-login", "name": "Log in", "type": "terminal", "args": ["--login"]}
KEY = {"id": "api-key", "name": "API key"}


def _record(tmp_path: Path, lines: list[tuple[str, dict[str, Any]]]) -> RunRecord:
    recorder = Recorder()
    for direction, message in lines:
        recorder.add(direction, json.dumps(message).encode())  # type: ignore[arg-type]
    run = AgentRun("t#1", "t", recorder, ClientSide(tmp_path))
    return RunRecord(RunConfig(argv=["agent"]), [run])


def _initialize(rid: int, caps: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    params = {"protocolVersion": 1, "clientCapabilities": caps}
    return "c2a", {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


def _answer(rid: int, methods: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": methods}
    return "a2c", {"jsonrpc": "2.0", "id": rid, "result": result}


def test_a_later_initialize_that_asks_may_be_offered_terminal_auth(tmp_path: Path) -> None:
    record = _record(
        tmp_path,
        [
            _initialize(1, {}),
            _answer(1, [KEY]),
            _initialize(2, {"auth": {"terminal": True}}),
            _answer(2, [KEY, TERMINAL]),
        ],
    )
    [outcome] = terminal_auth_only_for_capable_clients(record)
    assert outcome.verdict is Verdict.PASS, outcome.reason


def test_an_answer_to_a_request_that_did_not_ask_still_fails(tmp_path: Path) -> None:
    record = _record(
        tmp_path,
        [
            _initialize(1, {"auth": {"terminal": True}}),
            _answer(1, [KEY, TERMINAL]),
            _initialize(2, {}),
            _answer(2, [KEY, TERMINAL]),
        ],
    )
    [outcome] = terminal_auth_only_for_capable_clients(record)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.frames == [3]  # the second answer (seq 3), not the first (seq 1)
