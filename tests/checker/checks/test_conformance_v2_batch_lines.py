"""A JSON-RPC batch line is a protocol message on a v2 run, and stays a defect on a v1 run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_conformance.config import RunConfig
from acp_conformance.harness.client_side import ClientSide
from acp_conformance.harness.recorder import Recorder
from acp_conformance.judges.wire import stdout_only_json
from acp_conformance.outcomes import Verdict
from acp_conformance.scenarios.check_context import AgentRun, RunRecord
from acp_conformance.validation import load_backend


def _record(tmp_path: Path, version: int, answer: Any) -> RunRecord:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version},
    }
    result: dict[str, Any] = {"protocolVersion": version}
    lines: list[tuple[str, Any]] = [
        ("c2a", init),
        ("a2c", {"jsonrpc": "2.0", "id": 1, "result": result}),
        ("c2a", [{"jsonrpc": "2.0", "id": 2, "method": "session/list"}]),
        ("a2c", answer),
    ]
    recorder = Recorder()
    for direction, message in lines:
        recorder.add(direction, json.dumps(message).encode())  # type: ignore[arg-type]
    run = AgentRun("r#1", "protocol-v2", recorder, ClientSide(tmp_path))
    return RunRecord(RunConfig(argv=["agent"]), [run], backend=load_backend())


BATCH_ANSWER = [{"jsonrpc": "2.0", "id": 2, "result": {"sessions": []}}]


def test_a_batch_answer_is_a_protocol_line_on_v2(tmp_path: Path) -> None:
    outcomes = stdout_only_json(_record(tmp_path, 2, BATCH_ANSWER))
    assert [o.verdict for o in outcomes] == [Verdict.PASS], outcomes


def test_an_array_is_still_not_a_message_on_v1(tmp_path: Path) -> None:
    outcomes = stdout_only_json(_record(tmp_path, 1, BATCH_ANSWER))
    assert Verdict.FAIL in [o.verdict for o in outcomes]


def test_an_empty_or_mixed_array_is_not_a_batch_on_v2(tmp_path: Path) -> None:
    for answer in ([], [BATCH_ANSWER[0], 3]):
        outcomes = stdout_only_json(_record(tmp_path, 2, answer))
        assert Verdict.FAIL in [o.verdict for o in outcomes], answer
