"""Run-wide checks judge each recorded run by the protocol version it negotiated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_conformance.catalogue import CHECKS, REQUIREMENTS
from acp_conformance.config import RunConfig
from acp_conformance.harness.client_side import ClientSide
from acp_conformance.harness.recorder import Recorder
from acp_conformance.judges.consistency import no_unknown_root_keys
from acp_conformance.judges.schemas import agent_messages_valid
from acp_conformance.judges.session_ids import updates_before_response
from acp_conformance.outcomes import Verdict
from acp_conformance.scenarios.check_context import AgentRun, RunRecord
from acp_conformance.validation import load_backend
from acp_conformance.versions import negotiated_version

SESSION = "sess_1"
Line = tuple[str, dict[str, Any]]


def _record(tmp_path: Path, lines: list[Line]) -> RunRecord:
    recorder = Recorder()
    for direction, message in lines:
        recorder.add(direction, json.dumps(message).encode())  # type: ignore[arg-type]
    run = AgentRun("v2#1", "protocol-v2", recorder, ClientSide(tmp_path))
    return RunRecord(RunConfig(argv=["agent"]), [run], backend=load_backend())


def _v2_turn(answered: int) -> list[Line]:
    """A v2 client's initialize, a prompt answered at once, then its turn's updates."""
    init_result: dict[str, Any] = {
        "protocolVersion": answered,
        "info": {"name": "agent", "version": "1"},
        "capabilities": {},
    }
    chunk = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m2",
        "content": {"type": "text", "text": "hi"},
    }
    idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    return [
        (
            "c2a",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 2, "info": {"name": "c", "version": "1"}},
            },
        ),
        ("a2c", {"jsonrpc": "2.0", "id": 1, "result": init_result}),
        (
            "c2a",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": SESSION, "prompt": [{"type": "text", "text": "x"}]},
            },
        ),
        ("a2c", {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "m1"}}),
        (
            "a2c",
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": SESSION, "update": chunk},
            },
        ),
        (
            "a2c",
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": SESSION, "update": idle},
            },
        ),
    ]


def test_a_run_speaks_the_version_its_agent_answered(tmp_path: Path) -> None:
    assert negotiated_version(_record(tmp_path, _v2_turn(2)).runs[0]) == 2
    assert negotiated_version(_record(tmp_path, _v2_turn(1)).runs[0]) == 1
    assert negotiated_version(_record(tmp_path, []).runs[0]) == 1


def test_a_valid_v2_run_passes_the_schema_check(tmp_path: Path) -> None:
    outcomes = agent_messages_valid(_record(tmp_path, _v2_turn(2)))
    assert [o.verdict for o in outcomes] == [Verdict.PASS], outcomes


def test_the_same_frames_claimed_as_v1_fail_the_schema_check(tmp_path: Path) -> None:
    outcomes = agent_messages_valid(_record(tmp_path, _v2_turn(1)))
    assert Verdict.FAIL in [o.verdict for o in outcomes]


def test_v2_updates_after_the_prompt_answer_are_the_norm(tmp_path: Path) -> None:
    outcomes = updates_before_response(_record(tmp_path, _v2_turn(2)))
    assert [o.verdict for o in outcomes] == [Verdict.PASS], outcomes
    v1_outcomes = updates_before_response(_record(tmp_path, _v2_turn(1)))
    assert Verdict.FAIL in [o.verdict for o in v1_outcomes]


def test_every_v2_requirement_has_a_check() -> None:
    v2 = {rid for rid in REQUIREMENTS if rid.startswith("version.v2-")}
    assert v2 == {
        "version.v2-negotiation",
        "version.v2-newer-version",
        "version.v2-session-new",
        "version.v2-prompt-lifecycle",
        "version.v2-removed-methods",
        "version.v2-session-ids",
        "version.v2-custom-request-answered",
        "version.v2-notification-not-answered",
        "version.v2-session-list",
        "version.v2-session-delete",
        "version.v2-additional-directories",
        "version.v2-auth-methods",
        "version.v2-cancel-ends-cancelled",
        "version.v2-close-cancels-turn",
        "version.v2-user-message-echo",
        "version.v2-resume-updates-before-answer",
        "version.v2-replay-message-whole-first",
        "version.v2-batch-basics",
        "version.v2-batch-requests",
        "version.v2-cancel-meta-not-answered",
        "version.v2-stop-reason-known",
        "version.v2-prompt-image-accepted",
        "version.v2-prompt-audio-accepted",
        "version.v2-prompt-embedded-context-accepted",
        "version.v2-no-unadvertised-client-methods",
        "version.v2-close-idle-session",
        "version.v2-resume-result",
        "version.v2-resume-no-replay",
        "version.v2-replay-keeps-message-id",
        "version.v2-resume-additional-directories",
        "version.v2-set-config-full-list",
        "version.v2-config-update-complete",
        "version.v2-terminal-auth-shape",
        "version.v2-logout",
        "version.v2-login",
        "version.v2-message-ids",
        "version.v2-tool-call-ids",
        "version.v2-plan-ids",
        "version.v2-terminal-updates",
        "version.v2-open-enums",
        "version.v2-permission-requests",
        "version.v2-requires-action-while-asked",
        "version.v2-requires-action-resumes",
        "version.v2-elicitation-requests",
    }
    assert v2 <= {check.requirement for check in CHECKS}


def test_v2_initialize_fields_are_not_unknown_root_keys(tmp_path: Path) -> None:
    # `info` and `capabilities` are v2's names for v1's agentInfo/agentCapabilities: a v2
    # run's results are judged against the v2 schemas.
    outcomes = no_unknown_root_keys(_record(tmp_path, _v2_turn(2)))
    assert Verdict.FAIL not in [o.verdict for o in outcomes], outcomes
    v1_outcomes = no_unknown_root_keys(_record(tmp_path, _v2_turn(1)))
    assert Verdict.FAIL in [o.verdict for o in v1_outcomes]


def test_an_unknown_root_key_in_a_v2_result_still_fails(tmp_path: Path) -> None:
    lines = _v2_turn(2)
    direction, answer = lines[1]
    lines[1] = (direction, {**answer, "result": {**answer["result"], "models": {}}})
    outcomes = no_unknown_root_keys(_record(tmp_path, lines))
    assert Verdict.FAIL in [o.verdict for o in outcomes], outcomes
