"""The run-wide session-id and turn-ordering checks, judged over hand-made transcripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_conformance.catalogue import REQUIREMENTS
from acp_conformance.config import RunConfig
from acp_conformance.harness.client_side import ClientSide
from acp_conformance.harness.recorder import Recorder
from acp_conformance.judges.session_ids import (
    updates_after_session_handed_out,
    updates_before_response,
    updates_name_known_session,
)
from acp_conformance.outcomes import Outcome, Verdict
from acp_conformance.scenarios.check_context import AgentRun, RunRecord

Line = tuple[str, dict[str, Any]]


def _record(tmp_path: Path, lines: list[Line]) -> RunRecord:
    recorder = Recorder()
    for direction, message in lines:
        recorder.add(direction, json.dumps(message).encode())  # type: ignore[arg-type]
    run = AgentRun("t#1", "t", recorder, ClientSide(tmp_path))
    return RunRecord(RunConfig(argv=["agent"]), [run])


def _request(rid: int, method: str, **params: Any) -> Line:
    return "c2a", {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _result(rid: int, result: Any) -> Line:
    return "a2c", {"jsonrpc": "2.0", "id": rid, "result": result}


def _error(rid: int, code: int = -32602) -> Line:
    return "a2c", {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": "no"}}


def _chunk(session: str, text: str = "hi") -> Line:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return "a2c", {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }


def _prompt(rid: int, session: str) -> Line:
    return _request(
        rid, "session/prompt", sessionId=session, prompt=[{"type": "text", "text": "x"}]
    )


def _only(outcomes: list[Outcome]) -> Outcome:
    assert len(outcomes) == 1, outcomes
    return outcomes[0]


def test_updates_for_sessions_the_agent_handed_out_pass(tmp_path: Path) -> None:
    record = _record(
        tmp_path,
        [
            _request(1, "session/new", cwd="/w", mcpServers=[]),
            _result(1, {"sessionId": "s1"}),
            _prompt(2, "s1"),
            _chunk("s1"),
            _result(2, {"stopReason": "end_turn"}),
        ],
    )
    assert _only(updates_name_known_session(record)).verdict is Verdict.PASS


def test_an_update_before_the_response_that_hands_the_id_out_is_named_as_such(
    tmp_path: Path,
) -> None:
    record = _record(
        tmp_path,
        [
            _request(1, "session/new", cwd="/w", mcpServers=[]),
            _chunk("s1"),
            _result(1, {"sessionId": "s1"}),
        ],
    )
    # Early, not unknown: that is the house rule's finding, and only the house rule's.
    assert _only(updates_name_known_session(record)).verdict is Verdict.PASS
    outcome = _only(updates_after_session_handed_out(record))
    assert outcome.verdict is Verdict.FAIL
    assert (
        "session/update (agent_message_chunk) names session 's1' before the agent handed it "
        "out (in #2)" in outcome.reason
    )
    assert REQUIREMENTS["prompt.updates-after-session-handed-out"].house


def test_an_unknown_id_the_agent_accepted_is_left_to_the_unknown_id_requirement(
    tmp_path: Path,
) -> None:
    record = _record(
        tmp_path,
        [
            _prompt(1, "acp-conformance-unknown-session"),
            _chunk("acp-conformance-unknown-session"),
            _result(1, {"stopReason": "end_turn"}),
        ],
    )
    outcome = _only(updates_name_known_session(record))
    assert outcome.verdict is Verdict.PASS
    assert "session.unknown-id-rejected" in outcome.reason


def test_updates_for_an_id_the_agent_rejected_fail_with_the_rejection_named(
    tmp_path: Path,
) -> None:
    record = _record(
        tmp_path,
        [_prompt(1, "ghost"), _error(1), _chunk("ghost")],
    )
    outcome = _only(updates_name_known_session(record))
    assert outcome.verdict is Verdict.FAIL
    assert "session/prompt #0 and the agent itself rejected (error -32602 in #1)" in outcome.reason


def test_updates_for_an_id_nobody_mentioned_fail(tmp_path: Path) -> None:
    outcome = _only(updates_name_known_session(_record(tmp_path, [_chunk("out-of-thin-air")])))
    assert outcome.verdict is Verdict.FAIL
    assert "never handed out and the client never named" in outcome.reason


def test_a_rejected_second_prompt_does_not_end_the_running_turn(tmp_path: Path) -> None:
    lines = [
        _request(1, "session/new", cwd="/w", mcpServers=[]),
        _result(1, {"sessionId": "s1"}),
        _prompt(2, "s1"),
        _prompt(3, "s1"),
        _error(3),
        _chunk("s1"),
        _result(2, {"stopReason": "end_turn"}),
    ]
    assert _only(updates_before_response(_record(tmp_path, lines))).verdict is Verdict.PASS
    late = _record(tmp_path, [*lines, _chunk("s1")])
    assert _only(updates_before_response(late)).verdict is Verdict.FAIL


def test_a_replay_after_the_load_response_is_the_load_requirements_finding(
    tmp_path: Path,
) -> None:
    # One late replayed chunk must not fail prompt.updates-before-response as well as
    # session.load-replays-before-response (iac-code 0.16.0 was charged twice for it).
    record = _record(
        tmp_path,
        [
            _request(1, "session/load", sessionId="s1", cwd="/w", mcpServers=[]),
            _result(1, {}),
            _chunk("s1", "replayed late"),
        ],
    )
    assert _only(updates_before_response(record)).verdict is Verdict.PASS
    record = _record(
        tmp_path,
        [
            _request(1, "session/load", sessionId="s1", cwd="/w", mcpServers=[]),
            _result(1, {}),
            _prompt(2, "s1"),
            _result(2, {"stopReason": "end_turn"}),
            _chunk("s1", "after the turn"),
        ],
    )
    assert _only(updates_before_response(record)).verdict is Verdict.FAIL
