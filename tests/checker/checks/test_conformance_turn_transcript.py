"""The terminal report shows one prompt turn as the client saw it and lists the MUST/CAPABILITY
requirements that were not exercised, with why (issue 32, item 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp_conformance.harness.client_side import ClientSide
from acp_conformance.harness.recorder import Recorder
from acp_conformance.report import terminal, turn_transcript
from acp_conformance.scenarios.check_context import AgentRun

from tests.checker.checks.conformance_checker_support import LLM, raw_agent, run_checker


@pytest.mark.subprocess
def test_the_report_shows_a_turn_with_its_tool_call_and_permission_before_the_verdict() -> None:
    result = run_checker(raw_agent(), only=["turn.permission-allow"], **LLM)  # type: ignore[arg-type]
    lines = terminal.render(result, width=100).splitlines()
    assert lines[-1].startswith("CONFORMANT")  # the verdict stays the last line
    start = next(i for i, line in enumerate(lines) if line.startswith("One prompt turn as"))
    end = lines.index("", start)
    turn = lines[start + 1 : end]
    assert len(turn) <= turn_transcript.MAX_LINES
    steps = [line.split()[:2] for line in turn]
    assert steps == [
        ["client", "prompt"],
        ["agent", "tool_call"],
        ["agent", "request_permission"],
        ["client", "answer"],
        ["agent", "tool_call_update"],
        ["agent", "fs/write_text_file"],
        ["client", "answer"],
        ["agent", "tool_call_update"],
        ["agent", "agent_message"],
        ["agent", "prompt"],
    ]
    assert turn[3].endswith("allow_once")
    assert turn[8].endswith('"All done."')
    assert turn[-1].endswith("stopReason end_turn")
    assert all(len(line) <= 100 for line in turn)


@pytest.mark.subprocess
def test_the_summary_names_each_unexercised_must_with_its_reason() -> None:
    # Without a model the cancellation turn cannot run: a MUST the run did not exercise.
    result = run_checker(raw_agent(), only=["cancel.during-tool-call", "init.responds"])
    assert [r.requirement.id for r in result.unexercised] == ["cancel.during-tool-call"]
    lines = terminal.render(result, width=120).splitlines()
    head = lines.index("1 MUST/CAPABILITY requirements not exercised, and why:")
    listed = lines[head + 1]
    reason = " ".join(result.results["cancel.during-tool-call"].reason.split())
    assert listed.split()[0] == "cancel.during-tool-call"
    assert reason[:40] in listed
    assert lines[head + 2] == terminal.summary_line(result.results.values())
    assert "One prompt turn as" not in "\n".join(lines)  # no turn was recorded without a model


def _frame(recorder: Recorder, direction: str, message: dict[str, Any]) -> None:
    recorder.add(direction, json.dumps({"jsonrpc": "2.0", **message}).encode())  # type: ignore[arg-type]


def _update(session: str, update: dict[str, Any]) -> dict[str, Any]:
    return {"method": "session/update", "params": {"sessionId": session, "update": update}}


def _chunk(session: str, text: str) -> dict[str, Any]:
    return _update(
        session, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    )


def test_chunks_are_joined_bookkeeping_is_left_out_and_the_richest_turn_is_chosen() -> None:
    recorder = Recorder()
    # A plain text turn, then one with a tool call: the second shows more and is chosen.
    _frame(recorder, "c2a", {"id": 1, "method": "session/prompt", "params": {
        "sessionId": "s", "prompt": [{"type": "text", "text": "hello"}]}})  # fmt: skip
    _frame(recorder, "a2c", _chunk("s", "hi"))
    _frame(recorder, "a2c", {"id": 1, "result": {"stopReason": "end_turn"}})
    _frame(recorder, "c2a", {"id": 2, "method": "session/prompt", "params": {
        "sessionId": "s", "prompt": [{"type": "text", "text": "write main.tf"}]}})  # fmt: skip
    _frame(recorder, "a2c", _update("other", {"sessionUpdate": "usage_update", "used": 1}))
    _frame(recorder, "a2c", _update("s", {"sessionUpdate": "usage_update", "used": 1}))
    title = "Write /tmp/x-123/work/main.tf"
    _frame(recorder, "a2c", _update("s", {"sessionUpdate": "tool_call", "toolCallId": "t",
        "title": title, "kind": "edit", "status": "pending"}))  # fmt: skip
    _frame(recorder, "a2c", _update("s", {"sessionUpdate": "tool_call_update", "toolCallId": "t",
        "status": "completed"}))  # fmt: skip
    for piece in ("Created ", "main.tf ", "with a VPC."):
        _frame(recorder, "a2c", _chunk("s", piece))
    _frame(recorder, "a2c", {"id": 2, "result": {"stopReason": "end_turn"}})
    run = AgentRun("turns#1", "turns", recorder, ClientSide(Path(".")))
    lines = turn_transcript.render([run], width=100)
    assert lines == [
        "One prompt turn as the client saw it (turns#1, frames 3-11):",
        '  client prompt              "write main.tf"',
        "  agent  tool_call           Write …/work/main.tf edit pending",
        "  agent  tool_call_update    completed",
        '  agent  agent_message       "Created main.tf with a VPC."',
        "  agent  prompt answer       stopReason end_turn",
    ]


def test_a_long_turn_is_cut_to_the_limit_and_keeps_its_end() -> None:
    recorder = Recorder()
    _frame(recorder, "c2a", {"id": 1, "method": "session/prompt", "params": {
        "sessionId": "s", "prompt": [{"type": "text", "text": "plan"}]}})  # fmt: skip
    for n in range(40):
        _frame(recorder, "a2c", _update("s", {"sessionUpdate": "tool_call_update",
            "toolCallId": f"t{n}", "status": "completed"}))  # fmt: skip
    _frame(recorder, "a2c", {"id": 1, "result": {"stopReason": "end_turn"}})
    run = AgentRun("r#1", "turns", recorder, ClientSide(Path(".")))
    lines = turn_transcript.render([run], width=80)
    assert len(lines) == 1 + turn_transcript.MAX_LINES
    assert lines[-2] == "  … 29 more lines"  # 42 lines: 12 shown, then the end
    assert lines[-1].endswith("stopReason end_turn")
