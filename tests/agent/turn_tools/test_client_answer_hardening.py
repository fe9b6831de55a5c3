"""Issue 34 items 8 and 16: what a client answers to the agent's own requests.

An answer with neither ``result`` nor ``error`` (``JSON.stringify`` of ``result:
undefined``) is a malformed answer to that request: the permission is denied, the question
declined as failed, and the turn goes on (it used to get -32600 and hang until cancelled).
A client's huge error answer to ``ask_user`` is stored capped, like what the model sees.
The real agent on an in-memory connection; the real ``anthropic`` SDK against the scripted
model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.tools.contract import ToolLimits
from iac_code_dev.wire_client import NO_ANSWER

from tests.agent.turn_tools.agent_tools_kit import (
    ErrorAnswer,
    Frame,
    WireClient,
    final_update,
    in_memory_agent,
    result_text,
    tool_results_in,
)

pytestmark = pytest.mark.anyio

FORMS = {"elicitation": {"form": {}}}
WAIT = 30.0


async def answer_without_outcome(client: WireClient, frame: Frame) -> Any:
    await client.send({"jsonrpc": "2.0", "id": frame["id"]})
    return NO_ANSWER


def _agent_errors_for(client: WireClient, request_id: object) -> list[Frame]:
    return [
        f
        for f in client.frames
        if isinstance(f, dict) and "error" in f and "method" not in f and f.get("id") == request_id
    ]


ASK = Turn().tool_use("ask_user", {"question": "Which?", "choices": ["a", "b"]}, id="q1")
WRITE = Turn().tool_use("write_file", {"path": "out.txt", "content": "x"}, id="w1")


async def _one_tool_turn(
    home: Path, workspace: Path, llm: ScriptedLLMServer, tool_turn: Turn, method: str, answer: Any
) -> tuple[WireClient, Frame, Frame]:
    """A prompt whose model calls one tool that sends ``method``, answered by ``answer``:
    the client, the agent's request and the tool call's final update."""
    llm.script.add(tool_turn, Turn().text("ok").stop("end_turn"))
    async with in_memory_agent(home, llm_url=llm.url, capabilities=FORMS) as run:
        client = run.client
        client.handlers[method] = answer
        session = await client.new_session(workspace)
        with anyio.fail_after(WAIT):
            reply = await client.prompt(session, "go")
        [asked] = client.requests_for(method)
        final = final_update(client, "q1" if tool_turn is ASK else "w1")
    assert reply["stopReason"] == "end_turn"  # the turn went on
    return client, asked, final


async def test_a_permission_answer_without_result_or_error_denies(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    client, asked, final = await _one_tool_turn(
        home, workspace, llm, WRITE, "session/request_permission", answer_without_outcome
    )
    assert final["status"] == "failed"
    assert not (workspace / "out.txt").exists()
    assert _agent_errors_for(client, asked["id"]) == []  # no -32600 sent back for it


async def test_a_question_answer_without_result_or_error_fails_the_question(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    client, asked, final = await _one_tool_turn(
        home, workspace, llm, ASK, "elicitation/create", answer_without_outcome
    )
    assert final["status"] == "failed"
    text = result_text(tool_results_in(llm.model_requests[-1].messages)["q1"])
    assert "could not be asked" in text and "malformed" in text
    assert _agent_errors_for(client, asked["id"]) == []


async def test_a_huge_error_answer_to_a_question_is_stored_capped(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    async def fail_hugely(client: WireClient, frame: Frame) -> Any:
        return ErrorAnswer(-32603, "E" * 10_000_000)

    _client, _asked, final = await _one_tool_turn(
        home, workspace, llm, ASK, "elicitation/create", fail_hugely
    )
    cap = ToolLimits().result_cap_chars  # what the model is sent
    events_file = next((home / "sessions").rglob("events.jsonl"))
    stored = events_file.stat().st_size
    assert stored < 4 * cap, f"events.jsonl is {stored} bytes"
    [result] = [
        json.loads(line)
        for line in events_file.read_text().splitlines()
        if json.loads(line).get("type") == "tool_result"
    ]
    assert len(result["rawOutput"]["error"]) <= cap
    assert len(json.dumps(final)) < 4 * cap  # what the client is sent is capped alike
