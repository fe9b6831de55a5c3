"""Model failures during a prompt, in memory (SPEC §4.2, §12)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_scripted_llm import Turn

from tests.agent.handlers.agent_harness import open_agent, read_events

pytestmark = pytest.mark.anyio


def streamed_text(updates: list[dict]) -> str:
    return "".join(
        u["update"]["content"]["text"]
        for u in updates
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )


async def test_a_rejected_api_key_answers_authentication_required(tmp_path: Path) -> None:
    async with open_agent(tmp_path, [Turn().http_error(401, "invalid x-api-key")]) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "hello")
    assert reply.error["code"] == -32000
    assert reply.error["data"] == {"authMethods": ["anthropic-api-key"]}
    assert len(client.model_requests) == 1  # auth failures are not retried


async def test_a_server_error_after_partial_text_fails_without_duplicating_it(
    tmp_path: Path,
) -> None:
    turn = Turn().text("Half of the plan", chunks=2).stream_error("api_error", "Internal failure")
    async with open_agent(tmp_path, [turn, "Recovered."]) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "make a plan")
        after = await client.prompt(session_id, "again")
        messages = client.model_requests[-1].messages
    assert reply.error["code"] == -32603
    assert "model" in reply.error["message"].lower()
    assert "Traceback" not in str(reply.error)
    assert streamed_text(reply.updates) == "Half of the plan"  # once, never re-streamed
    assert len(client.model_requests) == 2  # no retry after output, then the next prompt
    events = read_events(tmp_path / "home", session_id)
    assert events[1]["type"] == "assistant_message" and events[1]["interrupted"] is True
    assert after.result["stopReason"] == "end_turn"
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]


async def test_a_rate_limit_is_retried_and_the_turn_succeeds(tmp_path: Path) -> None:
    script = [Turn().http_error(429, "slow down"), Turn().text("Finally.")]
    async with open_agent(tmp_path, script) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "hello")
    assert reply.result["stopReason"] == "end_turn"
    assert streamed_text(reply.updates) == "Finally."
    assert len(client.model_requests) == 2


async def test_a_stream_cut_off_before_any_output_is_retried(tmp_path: Path) -> None:
    script = [Turn().text("lost").truncate_after(1), Turn().text("Complete answer.")]
    async with open_agent(tmp_path, script) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "hello")
    assert reply.result["stopReason"] == "end_turn"
    assert streamed_text(reply.updates) == "Complete answer."


async def test_persistent_server_errors_end_the_turn_with_an_internal_error(
    tmp_path: Path,
) -> None:
    async with open_agent(tmp_path, [Turn().http_error(500)] * 6) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "hello")
        listed = await client.call("session/list", {})
    assert reply.error["code"] == -32603
    assert len(client.model_requests) == 6  # the bounded retry budget, then give up
    assert "result" in listed.frame  # the agent is still serving


async def test_an_unusable_model_answer_is_an_internal_error(tmp_path: Path) -> None:
    async with open_agent(tmp_path, [Turn().garbage()]) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "hello")
    assert reply.error["code"] == -32603
    assert len(client.model_requests) == 1
