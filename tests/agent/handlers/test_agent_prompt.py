"""session/prompt, in memory: streaming, stop reasons, usage, titles, content blocks
(SPEC §3, §4)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from acp_scripted_llm import Turn

from tests.agent.handlers.agent_harness import (
    StallingModelClient,
    make_settings,
    open_agent,
    read_events,
)

pytestmark = pytest.mark.anyio


def chunk_kinds(updates: list[dict]) -> list[str]:
    return [
        u["update"]["sessionUpdate"]
        for u in updates
        if u["update"]["sessionUpdate"] in ("agent_message_chunk", "agent_thought_chunk")
    ]


async def test_streamed_thinking_and_text_arrive_as_chunks_of_one_message(tmp_path: Path) -> None:
    turn = Turn().thinking("Checking the module.", chunks=2).text("All good here.", chunks=3)
    async with open_agent(tmp_path, [turn]) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "check it")
    chunks = [u["update"] for u in reply.updates if "messageId" in u["update"]]
    assert chunk_kinds(reply.updates) == ["agent_thought_chunk"] * 2 + ["agent_message_chunk"] * 3
    assert "".join(c["content"]["text"] for c in chunks[:2]) == "Checking the module."
    assert "".join(c["content"]["text"] for c in chunks[2:]) == "All good here."
    assert len({c["messageId"] for c in chunks}) == 1
    assert all(u["sessionId"] == session_id for u in reply.updates)


async def test_each_model_message_of_a_turn_has_its_own_message_id(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "main.tf").write_text('resource "null_resource" "x" {}\n')
    script = [
        Turn().text("Reading the file.").tool_use("read_file", {"path": "main.tf"}),
        Turn().text("It declares one null resource."),
    ]
    async with open_agent(tmp_path, script) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "what is in main.tf?")
    chunks = [
        u["update"] for u in reply.updates if u["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    first = {c["messageId"] for c in chunks if c["content"]["text"].startswith("Reading")}
    second = {c["messageId"] for c in chunks if c["content"]["text"].startswith("It declares")}
    assert len(first) == len(second) == 1
    assert first != second
    assert reply.result["stopReason"] == "end_turn"


@pytest.mark.parametrize(
    ("model_stop", "acp_stop"),
    [
        ("end_turn", "end_turn"),
        ("stop_sequence", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
    ],
)
async def test_model_stop_reasons_map_to_acp_stop_reasons(
    tmp_path: Path, model_stop: str, acp_stop: str
) -> None:
    async with open_agent(tmp_path, [Turn().text("partial answer").stop(model_stop)]) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "go")
    assert reply.result["stopReason"] == acp_stop


async def test_too_many_model_requests_end_the_turn_with_max_turn_requests(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.tf").write_text("# a\n")
    loop = [Turn().tool_use("read_file", {"path": "a.tf"}) for _ in range(3)]
    settings = make_settings(tmp_path / "home", max_turn_requests=2)
    async with open_agent(tmp_path, loop, settings=settings) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "loop")
    assert reply.result["stopReason"] == "max_turn_requests"
    assert len(client.model_requests) == 2


async def test_usage_is_summed_in_the_response_and_reported_after_each_model_call(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.tf").write_text("# a\n")
    script = [
        Turn()
        .tool_use("read_file", {"path": "a.tf"})
        .usage(
            input_tokens=100,
            output_tokens=10,
            cache_read_input_tokens=5,
            cache_creation_input_tokens=1,
        ),
        Turn().text("done").usage(input_tokens=200, output_tokens=20),
    ]
    async with open_agent(tmp_path, script) as client:
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "count")
    usage = reply.result["_meta"]["iac_code"]["usage"]
    assert usage == {
        "inputTokens": 300,
        "outputTokens": 30,
        "cacheReadTokens": 5,
        "cacheWriteTokens": 1,
        "totalTokens": 336,
    }
    assert "usage" not in reply.result  # unstable: only for clients that opted in
    usage_updates = [
        u["update"] for u in reply.updates if u["update"]["sessionUpdate"] == "usage_update"
    ]
    assert usage_updates == [
        {"sessionUpdate": "usage_update", "used": 106, "size": 200_000},
        {"sessionUpdate": "usage_update", "used": 200, "size": 200_000},
    ]


async def test_the_first_prompt_becomes_the_title(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        first = await client.prompt(session_id, "  Review   the VPC module\nplease ")
        second = await client.prompt(session_id, "and the subnets")
        listed = (await client.call("session/list", {})).result["sessions"]
    infos = [
        u["update"] for u in first.updates if u["update"]["sessionUpdate"] == "session_info_update"
    ]
    assert infos[0] == {
        "sessionUpdate": "session_info_update",
        "title": "Review the VPC module please",
    }
    # Every turn ends by reporting the session's new updatedAt, the one session/list shows.
    assert set(infos[1]) == {"sessionUpdate", "updatedAt"} and len(infos) == 2
    later = [
        u["update"] for u in second.updates if u["update"]["sessionUpdate"] == "session_info_update"
    ]
    assert [set(u) for u in later] == [{"sessionUpdate", "updatedAt"}]
    assert listed[0]["title"] == "Review the VPC module please"
    assert listed[0]["updatedAt"] == later[0]["updatedAt"]


async def test_a_second_prompt_while_one_runs_is_rejected(tmp_path: Path) -> None:
    model = StallingModelClient(["working..."])
    async with open_agent(tmp_path, model) as client:
        session_id = await client.new_session()
        running = await client.send(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "a"}]}
        )
        with anyio.fail_after(60):
            await model.stalled.wait()
        second = await client.prompt(session_id, "b")
        await client.notify("session/cancel", {"sessionId": session_id})
        first = await client.reply(running)
    assert second.error["code"] == -32602
    assert second.error["data"] == {"sessionId": "a prompt is already running"}
    assert first.result["stopReason"] == "cancelled"
    user_messages = [
        e for e in read_events(tmp_path / "home", session_id) if e["type"] == "user_message"
    ]
    assert len(user_messages) == 1  # the rejected prompt never touched the history


async def test_an_empty_prompt_is_invalid_params(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        reply = await client.call("session/prompt", {"sessionId": session_id, "prompt": []})
    assert reply.error["code"] == -32602
    assert reply.error["data"] == {"prompt": "must not be empty"}
    assert client.model_requests == []


async def test_an_unknown_content_block_type_is_invalid_params(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        reply = await client.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "video", "uri": "file:///a.mp4"}]},
        )
    assert reply.error["code"] == -32602
    detail = json.dumps(reply.error)
    assert "prompt" in reply.error["data"] or any(
        k.startswith("prompt") for k in reply.error["data"]
    )
    assert "pydantic" not in detail.lower()
    assert "validation error" not in detail.lower()


async def test_content_blocks_are_converted_for_the_model(tmp_path: Path) -> None:
    prompt = [
        {"type": "text", "text": "Look at these."},
        {
            "type": "resource",
            "resource": {
                "uri": "file:///ws/main.tf",
                "mimeType": "text/x-hcl",
                "text": "locals {}",
            },
        },
        {
            "type": "resource",
            "resource": {
                "uri": "file:///ws/state.bin",
                "mimeType": "application/zip",
                "blob": "AAAA",
            },
        },
        {"type": "resource_link", "uri": "file:///ws/vars.tf", "name": "vars.tf"},
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        {"type": "image", "mimeType": "image/tiff", "data": "SUkq"},
        {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
    ]
    async with open_agent(tmp_path) as client:
        session_id = await client.new_session()
        reply = await client.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
        assert reply.result["stopReason"] == "end_turn"
        blocks = client.model_requests[0].messages[0]["content"]
    assert blocks[0] == {"type": "text", "text": "Look at these."}
    assert "file:///ws/main.tf" in blocks[1]["text"] and "locals {}" in blocks[1]["text"]
    assert blocks[2]["type"] == "text"
    assert "file:///ws/state.bin" in blocks[2]["text"] and "application/zip" in blocks[2]["text"]
    assert "AAAA" not in blocks[2]["text"]
    assert "vars.tf" in blocks[3]["text"] and "file:///ws/vars.tf" in blocks[3]["text"]
    assert blocks[4] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert blocks[5] == {"type": "text", "text": "[image: image/tiff]"}
    assert blocks[6] == {"type": "text", "text": "[audio: audio/wav]"}


async def test_a_prompt_without_an_api_key_asks_for_authentication_and_keeps_nothing(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path / "home", api_key=None)
    async with open_agent(tmp_path, settings=settings) as client:
        # Without model_client the agent would build a real one; force the "no key" path.
        client.agent.models.forget_client()
        session_id = await client.new_session()
        reply = await client.prompt(session_id, "hello")
        listed = (await client.call("session/list", {})).result["sessions"]
    assert reply.error["code"] == -32000
    assert reply.error["data"] == {"authMethods": ["anthropic-api-key"]}
    assert read_events(tmp_path / "home", session_id) == []
    assert listed[0].get("title") is None


async def test_a_prompt_for_an_unknown_session_is_invalid_params(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.prompt("unknownSession0000000000", "hi")
    assert reply.error == {
        "code": -32602,
        "message": reply.error["message"],
        "data": {"sessionId": "unknown session"},
    }


async def test_a_running_prompt_does_not_block_other_requests_or_sessions(tmp_path: Path) -> None:
    model = StallingModelClient(["still going"])
    async with open_agent(tmp_path, model) as client:
        busy = await client.new_session()
        other = await client.new_session()
        running = await client.send(
            "session/prompt", {"sessionId": busy, "prompt": [{"type": "text", "text": "long"}]}
        )
        with anyio.fail_after(60):
            await model.stalled.wait()
        listed = await client.call("session/list", {})
        answered = await client.prompt(other, "quick one")
        await client.notify("session/cancel", {"sessionId": busy})
        cancelled = await client.reply(running)
    assert len(listed.result["sessions"]) == 2
    assert answered.result["stopReason"] == "end_turn"
    assert all(u["sessionId"] == other for u in answered.updates if "messageId" in u["update"])
    assert cancelled.result["stopReason"] == "cancelled"
