"""A request whose answer the checker stopped waiting for is reported by the check that
timed out, not a second time as "never answered" after the checker stopped the agent."""

from __future__ import annotations

import json
from pathlib import Path

from acp_conformance.config import RunConfig
from acp_conformance.harness.client_side import ClientSide
from acp_conformance.harness.process import ExitRecord, Rung
from acp_conformance.harness.recorder import Recorder
from acp_conformance.judges.wire import one_response_per_request
from acp_conformance.outcomes import Verdict
from acp_conformance.scenarios.check_context import AgentRun, RunRecord


def _record(tmp_path: Path, *, abandoned: bool) -> RunRecord:
    recorder = Recorder()
    request = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {}}
    frame = recorder.add("c2a", json.dumps(request).encode())
    if abandoned:
        recorder.abandoned.add(frame.seq)
    # The agent said something else meanwhile (a turn update), then was stopped.
    update = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}}
    recorder.add("a2c", json.dumps(update).encode())
    run = AgentRun("prompt#1", "prompt", recorder, ClientSide(tmp_path))
    run.exit = ExitRecord(Rung.SIGTERM, -15, orphans=False)
    return RunRecord(RunConfig(argv=["agent"]), [run])


def test_an_unanswered_request_still_fails_when_nobody_reported_it(tmp_path: Path) -> None:
    [outcome] = one_response_per_request(_record(tmp_path, abandoned=False))
    assert outcome.verdict is Verdict.FAIL and "never answered" in outcome.reason


def test_a_request_the_checker_gave_up_on_is_not_counted_again(tmp_path: Path) -> None:
    [outcome] = one_response_per_request(_record(tmp_path, abandoned=True))
    assert outcome.verdict is Verdict.PASS
