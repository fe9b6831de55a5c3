"""``gating.terminal-auth-advertised`` judges each initialize answer by the initialize it
answers: the fuzzer sends many in one process, and one that asks for terminal auth may get
it although the first did not (a false MUST failure of iac-code's own run)."""

from __future__ import annotations

import json
from pathlib import Path

from acp_conformance.config import RunConfig
from acp_conformance.harness.client_side import ClientSide
from acp_conformance.harness.recorder import Recorder
from acp_conformance.judges.consistency import terminal_auth_only_for_capable_clients
from acp_conformance.outcomes import Verdict
from acp_conformance.scenarios.check_context import AgentRun, RunRecord

TERMINAL = {"id": "login", "name": "Log in", "type": "terminal"}


def _exchange(recorder: Recorder, rid: int, terminal: bool) -> None:
    caps = {"auth": {"terminal": True}} if terminal else {}
    params = {"protocolVersion": 1, "clientCapabilities": caps}
    request = {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}
    recorder.add("c2a", json.dumps(request).encode())
    answer = {"protocolVersion": 1, "authMethods": [TERMINAL] if terminal else []}
    recorder.add("a2c", json.dumps({"jsonrpc": "2.0", "id": rid, "result": answer}).encode())


def _verdict(tmp_path: Path, *asks: bool, offer_to_last: bool = False) -> Verdict:
    recorder = Recorder()
    for rid, terminal in enumerate(asks, 1):
        _exchange(recorder, rid, terminal)
    if offer_to_last:  # one more initialize without the capability, offered terminal auth
        request = {"jsonrpc": "2.0", "id": 99, "method": "initialize", "params": {}}
        recorder.add("c2a", json.dumps(request).encode())
        answer = {"jsonrpc": "2.0", "id": 99, "result": {"authMethods": [TERMINAL]}}
        recorder.add("a2c", json.dumps(answer).encode())
    run = AgentRun("fuzz#1", "fuzz", recorder, ClientSide(tmp_path))
    [outcome] = terminal_auth_only_for_capable_clients(RunRecord(RunConfig(argv=["a"]), [run]))
    return outcome.verdict


def test_an_answer_to_an_initialize_that_asked_for_terminal_auth_passes(tmp_path: Path) -> None:
    assert _verdict(tmp_path, False, True) is Verdict.PASS


def test_terminal_auth_offered_to_an_initialize_that_did_not_ask_fails(tmp_path: Path) -> None:
    assert _verdict(tmp_path, False, True, offer_to_last=True) is Verdict.FAIL


def test_an_earlier_initialize_that_asked_does_not_excuse_a_later_one(tmp_path: Path) -> None:
    # The first initialize of the process asked; the last did not and was still offered it.
    assert _verdict(tmp_path, True, offer_to_last=True) is Verdict.FAIL
