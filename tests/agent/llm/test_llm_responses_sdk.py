"""The scripted server's OpenAI Responses API, driven by the real ``openai`` SDK.

Each case runs streamed and whole: a text turn, a function call answered by a
``function_call_output`` input item, and an HTTP error; plus a failure in the middle of a
stream and the SDK's stream helper, which rebuilds the response from the events and so
checks that their indexes and ids agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn, error_turn

openai = pytest.importorskip("openai")

READ_FILE = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def client_for(server: ScriptedLLMServer) -> Any:
    return openai.OpenAI(
        api_key="scripted-key", base_url=server.openai_base_url, max_retries=0, timeout=10
    )


def create(client: Any, *, stream: bool, **params: Any) -> tuple[Any, list[Any]]:
    """The final response and the stream's events (none for a whole answer)."""
    if not stream:
        return client.responses.create(model="gpt-test", **params), []
    events = list(client.responses.create(model="gpt-test", stream=True, **params))
    finals = [e.response for e in events if e.type in ("response.completed", "response.incomplete")]
    assert len(finals) == 1
    return finals[0], events


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_text_turn(llm_server: ScriptedLLMServer, stream: bool) -> None:
    llm_server.script.add(
        Turn()
        .thinking("Plan first", chunks=2)
        .text("Hello from Responses", chunks=3)
        .usage(input_tokens=9, output_tokens=4)
    )
    response, events = create(
        client_for(llm_server), stream=stream, input="Say hello", instructions="be brief"
    )
    assert response.status == "completed"
    assert response.output_text == "Hello from Responses"
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.output[0].summary[0].text == "Plan first"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 4)
    if stream:
        deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
        assert deltas == ["Hello f", "rom Res", "ponses"]
        assert [e.sequence_number for e in events] == list(range(len(events)))
        assert events[0].type == "response.created"
    (request,) = llm_server.model_requests
    assert request.api == "openai-responses" and request.streaming is stream
    assert request.api_key == "scripted-key" and request.system == "be brief"


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_function_call_then_function_call_output(
    llm_server: ScriptedLLMServer, stream: bool
) -> None:
    llm_server.script.add(
        Turn().tool_use("read_file", {"path": "main.tf"}, id="call_7", chunks=3),
        "The file declares one bucket.",
    )
    client = client_for(llm_server)
    question = [{"role": "user", "content": "What is in main.tf?"}]
    first, events = create(client, stream=stream, input=question, tools=[READ_FILE])
    (call,) = first.output
    assert (call.type, call.call_id, call.name) == ("function_call", "call_7", "read_file")
    assert json.loads(call.arguments) == {"path": "main.tf"}
    if stream:
        pieces = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
        assert len(pieces) == 3 and json.loads("".join(pieces)) == {"path": "main.tf"}
    follow_up = [
        *question,
        {
            "type": "function_call",
            "call_id": "call_7",
            "name": "read_file",
            "arguments": call.arguments,
        },
        {"type": "function_call_output", "call_id": "call_7", "output": 'resource "x" {}'},
    ]
    second, _ = create(client, stream=stream, input=follow_up, tools=[READ_FILE])
    assert second.output_text == "The file declares one bucket."
    first_request, second_request = llm_server.model_requests
    assert first_request.tool_names == ["read_file"]
    assert second_request.messages[-1] == {"role": "tool", "content": 'resource "x" {}'}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_http_error_reaches_the_sdk_as_its_status(
    llm_server: ScriptedLLMServer, stream: bool
) -> None:
    llm_server.script.add(error_turn(429, "Slow down, test", retry_after=1))
    with pytest.raises(openai.RateLimitError) as caught:
        create(client_for(llm_server), stream=stream, input="hi")
    assert caught.value.status_code == 429
    assert "Slow down, test" in caught.value.message


def test_max_tokens_ends_incomplete(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().text("cut sh").stop("max_tokens"))
    response, events = create(client_for(llm_server), stream=True, input="hi")
    assert events[-1].type == "response.incomplete"
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"


def test_failure_in_the_middle_of_a_stream(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(
        Turn().text("partial answer", chunks=2).stream_error("server_error", "Went away")
    )
    client = client_for(llm_server)
    events = list(client.responses.create(model="gpt-test", input="hi", stream=True))
    assert events[-1].type == "error"
    assert (events[-1].code, events[-1].message) == ("server_error", "Went away")
    assert not any(e.type == "response.completed" for e in events)
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == [
        "partial",
        " answer",
    ]


def test_stream_helper_rebuilds_the_response(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(
        Turn().thinking("Hmm").text("Two items", chunks=2).tool_use("read_file", {"path": "a"})
    )
    client = client_for(llm_server)
    with client.responses.stream(model="gpt-test", input="hi", tools=[READ_FILE]) as stream:
        final = stream.get_final_response()
    assert [item.type for item in final.output] == ["reasoning", "message", "function_call"]
    assert final.output_text == "Two items"
    assert final.output[2].arguments == json.dumps({"path": "a"})
