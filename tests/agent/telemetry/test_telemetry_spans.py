"""The span tree of real turns, recorded with the SDK's in-memory exporter.

Each test drives ``IacAgent`` through the shared wire client with the in-memory fake model
(or the real SDK against the scripted LLM server) and reads the finished spans: names and
GenAI attributes, the parent taken from the prompt's ``_meta.traceparent``, the trace handed
on in the ``_meta`` of the agent's requests to the client, and how cancelled turns, failed
turns, denied permissions and timed-out tools end.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.telemetry.telemetry_kit import (
    CALLER_SPAN_ID,
    CALLER_TRACE_ID,
    CALLER_TRACEPARENT,
    CALLER_TRACESTATE,
    Recorded,
    all_attribute_text,
    parent_of,
)
from tests.agent.turn_tools.agent_tools_kit import (
    FakeEditor,
    in_memory_agent,
    never_answer,
    selected,
)

pytestmark = pytest.mark.anyio

SECRET = "PROMPT-TEXT-THAT-MUST-NOT-LEAK"


def model_for(*turns: Turn) -> ScriptedModelClient:
    return ScriptedModelClient(list(turns), timing=False)


def write_then_answer(tool_id: str = "w1") -> ScriptedModelClient:
    """A model that writes a.txt (a call that asks permission), then answers."""
    return model_for(
        Turn().tool_use("write_file", {"path": "a.txt", "content": "x = 1\n"}, id=tool_id),
        Turn().text("Written."),
    )


def prompt_params(session: str, text: str = SECRET, **meta: str) -> dict[str, object]:
    params: dict[str, object] = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    if meta:
        params["_meta"] = meta
    return params


async def test_a_text_turn_continues_the_callers_trace(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    model = model_for(Turn().text("All good.").usage(input_tokens=120, output_tokens=7))
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        result = await run.client.request(
            "session/prompt",
            prompt_params(session, traceparent=CALLER_TRACEPARENT, tracestate=CALLER_TRACESTATE),
            stream=session,
        )
        assert result["stopReason"] == "end_turn"

    turn = recorded.one("invoke_agent")
    assert turn.name == "invoke_agent iac-code"
    assert format(turn.context.trace_id, "032x") == CALLER_TRACE_ID
    assert format(parent_of(turn) or 0, "016x") == CALLER_SPAN_ID
    assert turn.parent is not None and turn.parent.is_remote
    assert str(turn.context.trace_state) == str(turn.parent.trace_state)
    assert turn.context.trace_state.get("editor") == "turn42"
    attributes = dict(turn.attributes or {})
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["gen_ai.conversation.id"] == session
    assert attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert attributes["gen_ai.usage.input_tokens"] == 120
    assert attributes["gen_ai.usage.output_tokens"] == 7

    chat = recorded.one("chat ")
    assert parent_of(chat) == turn.context.span_id
    assert chat.context.trace_id == turn.context.trace_id
    chat_attributes = dict(chat.attributes or {})
    assert chat_attributes["gen_ai.operation.name"] == "chat"
    assert chat_attributes["gen_ai.request.model"] == attributes["gen_ai.request.model"]
    assert chat_attributes["gen_ai.usage.input_tokens"] == 120
    assert chat_attributes["gen_ai.usage.output_tokens"] == 7
    assert chat_attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
    # Nothing the user typed is recorded unless --otel-content asks for it.
    assert SECRET not in all_attribute_text(recorded.spans())


async def test_a_prompt_without_traceparent_starts_a_new_trace(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    async with in_memory_agent(home, model_client=model_for(Turn().text("Hi."))) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "hello")
    turn = recorded.one("invoke_agent")
    assert turn.parent is None
    assert format(turn.context.trace_id, "032x") != CALLER_TRACE_ID


async def test_a_malformed_traceparent_is_ignored(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    async with in_memory_agent(home, model_client=model_for(Turn().text("Hi."))) as run:
        session = await run.client.new_session(workspace)
        result = await run.client.request(
            "session/prompt", prompt_params(session, traceparent="00-zz-yy-01"), stream=session
        )
        assert result["stopReason"] == "end_turn"
    assert recorded.one("invoke_agent").parent is None


async def test_a_tool_call_with_permission_nests_under_the_turn(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    model = write_then_answer()
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.request(
            "session/prompt", prompt_params(session, traceparent=CALLER_TRACEPARENT), stream=session
        )
        asked = run.client.requests_for("session/request_permission")
    assert (workspace / "a.txt").read_text() == "x = 1\n"

    turn = recorded.one("invoke_agent")
    tool = recorded.one("execute_tool")
    assert tool.name == "execute_tool write_file"
    assert parent_of(tool) == turn.context.span_id
    tool_attributes = dict(tool.attributes or {})
    assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_attributes["gen_ai.tool.name"] == "write_file"
    assert tool_attributes["gen_ai.tool.call.id"] == "w1"
    assert tool_attributes["iac_code.tool.outcome"] == "completed"
    assert "error.type" not in tool_attributes
    assert "gen_ai.tool.call.arguments" not in tool_attributes

    wait = recorded.one("permission_wait")
    assert parent_of(wait) == tool.context.span_id
    assert dict(wait.attributes or {})["iac_code.permission.outcome"] == "allowed"
    request = recorded.one("session/request_permission")
    assert parent_of(request) == wait.context.span_id
    assert dict(request.attributes or {})["iac_code.outcome"] == "ok"
    # The client got the trace in the request's _meta, naming the request's own span.
    sent = asked[0]["params"]["_meta"]["traceparent"]
    assert sent == f"00-{CALLER_TRACE_ID}-{format(request.context.span_id, '016x')}-01"
    assert len(recorded.named("chat ")) == 2
    assert SECRET not in all_attribute_text(recorded.spans())


async def test_a_denied_permission_ends_the_tool_call_declined(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    model = write_then_answer()
    async with in_memory_agent(home, model_client=model) as run:

        async def reject(client: object, frame: object) -> object:
            return selected("reject_once")

        run.client.handlers["session/request_permission"] = reject
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "write")
    assert not (workspace / "a.txt").exists()
    wait = dict(recorded.one("permission_wait").attributes or {})
    assert wait["iac_code.permission.outcome"] == "denied"
    assert wait["iac_code.permission.option_id"] == "reject_once"
    tool = recorded.one("execute_tool")
    assert dict(tool.attributes or {})["error.type"] == "declined"
    assert tool.status.status_code.name == "ERROR"
    outcomes = recorded.metric_points()["iac_code.permission.outcomes"]
    assert [dict(p.attributes) for p in outcomes] == [{"iac_code.permission.outcome": "denied"}]


async def test_a_cancelled_turn_ends_every_open_span(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    model = write_then_answer()
    async with in_memory_agent(home, model_client=model) as run:
        client = run.client
        client.handlers["session/request_permission"] = never_answer
        session = await client.new_session(workspace)
        prompt_id = await client.start_prompt(session, "write")
        await client.wait_for(lambda: client.requests_for("session/request_permission"))
        await client.notify("session/cancel", {"sessionId": session})
        answer = await client.response(prompt_id)
        assert answer["result"]["stopReason"] == "cancelled"

    turn = recorded.one("invoke_agent")
    assert dict(turn.attributes or {})["gen_ai.response.finish_reasons"] == ("cancelled",)
    assert turn.status.status_code.name == "UNSET"
    tool = recorded.one("execute_tool")
    assert dict(tool.attributes or {})["error.type"] == "cancelled"
    wait = recorded.one("permission_wait")
    assert dict(wait.attributes or {})["iac_code.permission.outcome"] == "cancelled"
    request = recorded.one("session/request_permission")
    assert dict(request.attributes or {})["iac_code.outcome"] == "cancelled"
    for span in recorded.spans():  # every span ended inside the turn's trace
        assert span.end_time is not None
        assert span.context.trace_id == turn.context.trace_id
    turns = recorded.metric_points()["iac_code.turns"]
    assert [dict(p.attributes) for p in turns] == [{"iac_code.stop_reason": "cancelled"}]


async def test_a_failed_model_request_marks_the_turn_and_the_chat(
    workspace: Path, home: Path, llm: ScriptedLLMServer, recorded: Recorded
) -> None:
    llm.script.add(Turn().http_error(400, "bad request", error_type="invalid_request_error"))
    async with in_memory_agent(home, llm_url=llm.url, retry_base_delay=0.01) as run:
        session = await run.client.new_session(workspace)
        # The real SDK is imported by this first prompt: slow on a busy machine.
        frame = await run.client.response(await run.client.start_prompt(session, "hi"), 60)
        assert "error" in frame
    turn = recorded.one("invoke_agent")
    assert turn.status.status_code.name == "ERROR"
    assert dict(turn.attributes or {})["error.type"] == "InternalError"
    chat = recorded.one("chat ")
    assert chat.status.status_code.name == "ERROR"
    assert dict(chat.attributes or {})["error.type"]
    turns = recorded.metric_points()["iac_code.turns"]
    assert [dict(p.attributes) for p in turns] == [{"error.type": "InternalError"}]


async def test_a_tool_that_times_out_is_recorded_as_timeout(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    model = model_for(
        Turn().tool_use("bash", {"command": "sleep 30", "timeout": 1}, id="b1"),
        Turn().text("It timed out."),
    )
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        assert (await run.client.prompt(session, "run it"))["stopReason"] == "end_turn"
    tool = recorded.one("execute_tool")
    attributes = dict(tool.attributes or {})
    assert attributes["gen_ai.tool.name"] == "bash"
    assert attributes["iac_code.tool.outcome"] == "timeout"
    assert attributes["error.type"] == "timeout"
    durations = recorded.metric_points()["gen_ai.execute_tool.duration"]
    assert {
        (p.attributes["gen_ai.tool.name"], p.attributes["iac_code.tool.outcome"]) for p in durations
    } == {("bash", "timeout")}


async def test_client_fs_and_terminal_requests_get_spans_and_the_trace(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    editor = FakeEditor(buffers={str(workspace / "main.tf"): "unsaved = true\n"})
    model = model_for(
        Turn().tool_use("read_file", {"path": "main.tf"}, id="r1"),
        Turn().tool_use("bash", {"command": "echo hi"}, id="b1"),
        Turn().text("Done."),
    )
    async with in_memory_agent(
        home, model_client=model, capabilities=FakeEditor.CAPABILITIES
    ) as run:
        editor.install(run.client)
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "read and run")
        reads = run.client.requests_for("fs/read_text_file")
        creates = run.client.requests_for("terminal/create")

    read_tool = next(s for s in recorded.named("execute_tool") if s.name.endswith("read_file"))
    read = recorded.one("fs/read_text_file")
    assert parent_of(read) == read_tool.context.span_id
    assert dict(read.attributes or {})["rpc.method"] == "fs/read_text_file"
    assert dict(read.attributes or {})["iac_code.outcome"] == "ok"
    span_hex = format(read.context.span_id, "016x")
    assert reads[0]["params"]["_meta"]["traceparent"].split("-")[2] == span_hex
    terminal_methods = {s.name for s in recorded.named("terminal/")}
    assert {"terminal/create", "terminal/wait_for_exit", "terminal/release"} <= terminal_methods
    assert "traceparent" in creates[0]["params"]["_meta"]


async def test_a_failed_client_request_carries_its_error_code(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    editor = FakeEditor()  # no buffers: reads answer -32002
    model = model_for(
        Turn().tool_use("read_file", {"path": "gone.tf"}, id="r1"), Turn().text("Missing.")
    )
    async with in_memory_agent(
        home, model_client=model, capabilities=FakeEditor.CAPABILITIES
    ) as run:
        editor.install(run.client)
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "read")
    read = recorded.one("fs/read_text_file")
    assert dict(read.attributes or {})["error.type"] == "-32002"
    assert dict(read.attributes or {})["iac_code.outcome"] == "error"
    assert read.status.status_code.name == "ERROR"


async def test_content_is_recorded_only_when_asked(
    workspace: Path, home: Path, recorded_with_content: Recorded
) -> None:
    model = write_then_answer()
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, SECRET)
    turn = dict(recorded_with_content.one("invoke_agent").attributes or {})
    assert SECRET in str(turn["gen_ai.input.messages"])
    tool = dict(recorded_with_content.one("execute_tool").attributes or {})
    assert '"a.txt"' in str(tool["gen_ai.tool.call.arguments"])
    assert "gen_ai.tool.call.result" in tool
