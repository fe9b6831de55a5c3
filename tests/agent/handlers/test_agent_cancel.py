"""Cancellation and ordering of a prompt turn, in memory (SPEC §1, §2, §4.3)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path

import anyio
import pytest
from iac_code.llm.contract import ModelRateLimitError, ModelRequest, StreamEvent
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.handlers.agent_harness import (
    AgentClient,
    StallingModelClient,
    make_settings,
    message_texts,
    open_agent,
    read_events,
)

pytestmark = pytest.mark.anyio

PROMPT = [{"type": "text", "text": "plan the network"}]


class RateLimitedModel:
    """Every call is answered 429, so the agent backs off before retrying."""

    def __init__(self) -> None:
        self.calls = 0
        self.called = anyio.Event()

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        return self._stream()

    async def _stream(self) -> AsyncGenerator[StreamEvent, None]:
        self.calls += 1
        self.called.set()
        raise ModelRateLimitError("slow down", status_code=429)
        yield  # pragma: no cover - makes this an async generator


async def start_stalled_prompt(client: AgentClient, model: StallingModelClient) -> tuple[str, int]:
    session_id = await client.new_session()
    request_id = await client.send("session/prompt", {"sessionId": session_id, "prompt": PROMPT})
    with anyio.fail_after(60):
        await model.stalled.wait()
    return session_id, request_id


async def test_session_cancel_ends_the_prompt_with_cancelled_and_keeps_the_streamed_text(
    tmp_path: Path,
) -> None:
    model = StallingModelClient(["Drafting ", "the VPC"])
    async with open_agent(tmp_path, model) as client:
        session_id, request_id = await start_stalled_prompt(client, model)
        await client.notify("session/cancel", {"sessionId": session_id})
        # The model stalls for ever: only the cancel can end this turn (a generous bound,
        # since a loaded machine is slow, not wrong).
        with anyio.fail_after(60):
            reply = await client.reply(request_id)
    assert reply.result["stopReason"] == "cancelled"
    texts = [u["update"]["content"]["text"] for u in reply.updates if "messageId" in u["update"]]
    assert texts == ["Drafting ", "the VPC"]
    stored = read_events(tmp_path / "home", session_id, with_partials=True)
    # The chunks were written ahead as partials; the cancel stored the reply as one message.
    assert "".join(e["text"] for e in stored if e["type"] == "partial_reply") == "".join(texts)
    events = [e for e in stored if e["type"] != "partial_reply"]
    assert [e["type"] for e in events] == ["user_message", "assistant_message"]
    assert events[0]["content"] == PROMPT
    assert events[1]["interrupted"] is True
    assert events[1]["blocks"] == [{"type": "text", "text": "Drafting the VPC"}]


async def test_the_prompt_after_a_cancel_is_a_new_user_message(tmp_path: Path) -> None:
    model = StallingModelClient(["Half an answer"], then=ScriptedModelClient(["Fresh answer"]))
    async with open_agent(tmp_path, model) as client:
        session_id, request_id = await start_stalled_prompt(client, model)
        await client.notify("session/cancel", {"sessionId": session_id})
        await client.reply(request_id)
        reply = await client.prompt(session_id, "try again")
        messages = model.requests[1].messages
    assert reply.result["stopReason"] == "end_turn"
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert message_texts(messages[0]) == ["plan the network"]
    assert "Half an answer" in message_texts(messages[1])[0]
    assert any("interrupted" in text for text in message_texts(messages[1]))
    assert message_texts(messages[2]) == ["try again"]


async def test_cancel_request_on_a_prompt_answers_cancelled(tmp_path: Path) -> None:
    model = StallingModelClient(["thinking it over"])
    async with open_agent(tmp_path, model) as client:
        _session_id, request_id = await start_stalled_prompt(client, model)
        await client.notify("$/cancel_request", {"requestId": request_id})
        with anyio.fail_after(60):
            reply = await client.reply(request_id)
    assert reply.result["stopReason"] == "cancelled"


async def test_cancel_request_arriving_with_the_prompt_still_answers_cancelled(
    tmp_path: Path,
) -> None:
    # Both frames are read in one chunk: the cancel is seen before the handler starts.
    model = ScriptedModelClient(["the answer"], timing=False)
    async with open_agent(tmp_path, model) as client:
        session_id = await client.new_session()
        prompt = {
            "jsonrpc": "2.0",
            "id": "p-1",
            "method": "session/prompt",
            "params": {"sessionId": session_id, "prompt": PROMPT},
        }
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "p-1"}}
        await client.send_together(prompt, cancel)
        reply = await client.reply("p-1")
        again = await client.prompt(session_id, "a normal prompt afterwards")
    assert reply.result["stopReason"] == "cancelled"
    assert "agent_message_chunk" not in reply.kinds()
    assert again.result["stopReason"] == "end_turn"
    assert len(model.requests) == 1


async def test_cancel_request_on_another_running_request_answers_request_cancelled(
    tmp_path: Path,
) -> None:
    # session/close waits for the running turn to end, so it is in flight long enough.
    model = StallingModelClient(["busy"])
    async with open_agent(tmp_path, model) as client:
        session_id, prompt_id = await start_stalled_prompt(client, model)
        close = {
            "jsonrpc": "2.0",
            "id": "close-1",
            "method": "session/close",
            "params": {"sessionId": session_id},
        }
        cancel = {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": "close-1"},
        }
        await client.send_together(close, cancel)
        closed = await client.reply("close-1")
        prompt = await client.reply(prompt_id)
        # However far the cancelled close got, the session can be used again.
        reloaded = await client.load(session_id)
    assert closed.error["code"] == -32800
    assert prompt.result["stopReason"] == "cancelled"
    assert "result" in reloaded.frame, reloaded.frame


async def test_cancel_request_for_a_finished_or_unknown_request_is_ignored(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        await client.notify("$/cancel_request", {"requestId": 12345})
        await client.notify("session/cancel", {"sessionId": "unknownSession0000000000"})
        reply = await client.prompt(session_id, "still fine?")
    assert reply.result["stopReason"] == "end_turn"


async def test_no_update_of_a_turn_follows_its_response(tmp_path: Path) -> None:
    async with open_agent(tmp_path, ["a streamed answer " * 20]) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "stream a lot")
        end = await client.barrier()
        after = client.updates_between(reply.index + 1, end, session_id)
    assert "agent_message_chunk" in reply.kinds()
    assert after == []


async def test_no_update_of_a_cancelled_turn_follows_its_response(tmp_path: Path) -> None:
    model = StallingModelClient(["x"] * 50)
    async with open_agent(tmp_path, model) as client:
        session_id, request_id = await start_stalled_prompt(client, model)
        await client.notify("session/cancel", {"sessionId": session_id})
        reply = await client.reply(request_id)
        end = await client.barrier()
        after = client.updates_between(reply.index + 1, end, session_id)
    assert after == []


async def test_closing_a_session_cancels_its_running_turn(tmp_path: Path) -> None:
    model = StallingModelClient(["closing soon"])
    async with open_agent(tmp_path, model) as client:
        session_id, request_id = await start_stalled_prompt(client, model)
        closed = await client.call("session/close", {"sessionId": session_id})
        reply = await client.reply(request_id)
    assert closed.result == {}
    assert reply.result["stopReason"] == "cancelled"
    events = read_events(tmp_path / "home", session_id)
    assert [e["type"] for e in events] == ["user_message", "assistant_message"]


async def test_cancel_during_a_retry_backoff_answers_cancelled_at_once(tmp_path: Path) -> None:
    model = RateLimitedModel()
    settings = make_settings(tmp_path / "home", retry_base_delay=30.0)
    async with open_agent(tmp_path, model, settings=settings) as client:
        session_id = await client.new_session()
        request_id = await client.send(
            "session/prompt", {"sessionId": session_id, "prompt": PROMPT}
        )
        with anyio.fail_after(60):
            await model.called.wait()
        await client.notify("session/cancel", {"sessionId": session_id})
        with anyio.fail_after(60):
            reply = await client.reply(request_id)
    # Not a clock but what happened: the turn ended as cancelled with no second model call,
    # so the cancel cut the 10-20 s backoff short (an ignored cancel ends in a retry).
    assert reply.result["stopReason"] == "cancelled"
    assert model.calls == 1
