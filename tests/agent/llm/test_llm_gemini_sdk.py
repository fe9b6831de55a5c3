"""The scripted server's Gemini API, driven by the real ``google-genai`` SDK.

Each case runs streamed (``:streamGenerateContent?alt=sse``) and whole
(``:generateContent``): a text turn, a function call answered by a function response, and
an HTTP error; plus a failure in the middle of a stream and the JSON-mode side call.
"""

from __future__ import annotations

from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn, error_turn

genai = pytest.importorskip("google.genai")
from google.genai import errors, types  # noqa: E402

READ_FILE = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="read_file",
            description="Read a file",
            parameters=types.Schema(
                type=types.Type.OBJECT, properties={"path": types.Schema(type=types.Type.STRING)}
            ),
        )
    ]
)


def client_for(server: ScriptedLLMServer) -> Any:
    # One attempt only: the error cases must see the scripted status, not a retry of it.
    options = types.HttpOptions(
        base_url=server.url, timeout=10_000, retry_options=types.HttpRetryOptions(attempts=1)
    )
    return genai.Client(api_key="scripted-key", http_options=options)


def generate(client: Any, contents: Any, *, stream: bool, **config: Any) -> list[Any]:
    """The responses of one call: the chunks of a stream, or the one whole response."""
    settings = types.GenerateContentConfig(**config) if config else None
    models = client.models
    if stream:
        return list(
            models.generate_content_stream(model="gemini-test", contents=contents, config=settings)
        )
    return [models.generate_content(model="gemini-test", contents=contents, config=settings)]


def joined_text(responses: list[Any]) -> str:
    return "".join(
        part.text
        for response in responses
        for part in response.candidates[0].content.parts or []
        if part.text and not part.thought
    )


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_text_turn(llm_server: ScriptedLLMServer, stream: bool) -> None:
    llm_server.script.add(
        Turn()
        .thinking("Plan first", chunks=2)
        .text("Hello from Gemini", chunks=3)
        .usage(input_tokens=7, output_tokens=5)
    )
    responses = generate(client_for(llm_server), "Say hello", stream=stream)
    assert joined_text(responses) == "Hello from Gemini"
    thoughts = [
        part.text
        for response in responses
        for part in response.candidates[0].content.parts
        if part.thought
    ]
    assert thoughts == ["Plan first"]  # one summary part, though scripted in two chunks
    last = responses[-1]
    assert last.candidates[0].finish_reason == types.FinishReason.STOP
    assert last.usage_metadata.prompt_token_count == 7
    assert last.usage_metadata.candidates_token_count == 5
    if stream:
        assert len(responses) == 4  # the thought whole, then three text pieces
    (request,) = llm_server.model_requests
    assert request.api == "gemini" and request.streaming is stream
    assert request.api_key == "scripted-key"
    assert request.messages == [
        {"role": "user", "content": [{"type": "text", "text": "Say hello"}]}
    ]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_function_call_then_function_response(llm_server: ScriptedLLMServer, stream: bool) -> None:
    llm_server.script.add(
        Turn().text("Reading it.").tool_use("read_file", {"path": "main.tf"}, id="call-7"),
        "The file declares one bucket.",
    )
    client = client_for(llm_server)
    question = types.Content(role="user", parts=[types.Part(text="What is in main.tf?")])
    first = generate(client, [question], stream=stream, tools=[READ_FILE])
    calls = [
        part.function_call
        for response in first
        for part in response.candidates[0].content.parts
        if part.function_call
    ]
    assert [(c.name, c.args, c.id) for c in calls] == [("read_file", {"path": "main.tf"}, "call-7")]
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id="call-7", name="read_file", response={"output": 'resource "x" {}'}
                )
            )
        ],
    )
    history = [
        question,
        types.Content(role="model", parts=[types.Part(function_call=calls[0])]),
        answer,
    ]
    second = generate(client, history, stream=stream, tools=[READ_FILE])
    assert joined_text(second) == "The file declares one bucket."
    first_request, second_request = llm_server.model_requests
    assert first_request.tool_names == ["read_file"]
    assert second_request.messages[-1]["content"] == [{"type": "tool_result", "name": "read_file"}]
    body_parts = second_request.body["contents"][-1]["parts"]
    assert body_parts[0]["functionResponse"]["response"] == {"output": 'resource "x" {}'}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_http_error_reaches_the_sdk_as_its_status(
    llm_server: ScriptedLLMServer, stream: bool
) -> None:
    llm_server.script.add(error_turn(429, "Quota exhausted for the test"))
    with pytest.raises(errors.ClientError) as caught:
        generate(client_for(llm_server), "hi", stream=stream)
    assert caught.value.code == 429
    assert caught.value.status == "RESOURCE_EXHAUSTED"
    assert "Quota exhausted for the test" in str(caught.value.message)


def test_failure_in_the_middle_of_a_stream(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().text("partial answer", chunks=2).stream_error(message="Went away"))
    seen: list[str] = []
    client = client_for(llm_server)  # held: a dropped client closes its connection pool
    with pytest.raises(errors.APIError) as caught:
        for response in client.models.generate_content_stream(model="gemini-test", contents="hi"):
            seen.append(joined_text([response]))
    assert seen == ["partial"]  # the first piece arrived, the finishing one was replaced
    assert "Went away" in str(caught.value.message)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_json_mode_calls_are_side_calls(llm_server: ScriptedLLMServer, stream: bool) -> None:
    llm_server.script.add("the real turn")
    client = client_for(llm_server)
    routing = generate(client, "route this", stream=stream, response_mime_type="application/json")
    assert joined_text(routing) == "{}"
    assert llm_server.script.remaining == 1  # the scripted turn is still there
    assert joined_text(generate(client, "now answer", stream=stream)) == "the real turn"


def test_count_tokens_and_unknown_method(llm_server: ScriptedLLMServer) -> None:
    client = client_for(llm_server)
    counted = client.models.count_tokens(model="gemini-test", contents="a few words here")
    assert counted.total_tokens >= 1
    assert llm_server.model_requests == []  # counting consumes no turn
    with pytest.raises(errors.ClientError) as caught:
        client.models.embed_content(model="gemini-test", contents="x")
    assert caught.value.code == 404 and caught.value.status == "NOT_FOUND"
