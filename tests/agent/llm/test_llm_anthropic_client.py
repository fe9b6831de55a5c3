"""`AnthropicModelClient` driving the real `anthropic` SDK against the scripted server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.llm import (
    BlockFinished,
    MessageFinished,
    ModelAuthError,
    ModelConnectionError,
    ModelRequest,
    ModelRequestError,
    ModelResponse,
    ModelResponseError,
    ModelServerError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    ToolUseInputDelta,
    ToolUseStarted,
    collect,
)
from iac_code.llm.anthropic_client import AnthropicModelClient, StreamApi, build_params

pytestmark = pytest.mark.anyio

STREAM_APIS: list[StreamApi] = ["sse", "raw", "helper"]
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def make_request(**overrides: object) -> ModelRequest:
    fields: dict[str, object] = {
        "model": "claude-test",
        "messages": [{"role": "user", "content": "Write a Terraform VPC"}],
        "system": "You are an IaC agent.",
        "tools": TOOLS,
        "max_tokens": 1024,
    }
    fields.update(overrides)
    return ModelRequest(**fields)  # type: ignore[arg-type]


async def run(
    client: AnthropicModelClient,
    request: ModelRequest | None = None,
) -> tuple[list[StreamEvent], ModelResponse]:
    events: list[StreamEvent] = []
    with anyio.fail_after(120):
        async with aclosing(client.stream(request or make_request())) as stream:
            async for event in stream:
                events.append(event)
    assert isinstance(events[-1], MessageFinished)
    return events, events[-1].response


@pytest.fixture(params=STREAM_APIS)
def stream_api(request: pytest.FixtureRequest) -> StreamApi:
    return request.param


async def test_text_streamed_in_many_chunks(
    llm_server: ScriptedLLMServer, stream_api: StreamApi
) -> None:
    text = 'resource "aws_vpc" "main" { cidr_block = "10.0.0.0/16" }\n' * 10
    llm_server.script.add(Turn().text(text, chunk_size=3))
    client = AnthropicModelClient("test-key", llm_server.url, stream_api=stream_api)
    try:
        events, response = await run(client)
    finally:
        await client.aclose()
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == -(-len(text) // 3)
    assert "".join(d.text for d in deltas) == text
    assert response.content == [{"type": "text", "text": text}]
    assert response.text == text
    assert response.stop_reason == "end_turn"
    assert isinstance(events[-2], BlockFinished)


async def test_thinking_with_signature_then_tool_use(
    llm_server: ScriptedLLMServer, stream_api: StreamApi
) -> None:
    tool_input = {"path": "modules/vpc/main.tf", "limit": 40, "nested": {"a": [1, 2, "x"]}}
    llm_server.script.add(
        Turn()
        .thinking("I should read the module first.", signature="sig-abc", chunks=4)
        .text("Reading it.")
        .tool_use("read_file", tool_input, id="toolu_42", chunk_size=5)
    )
    client = AnthropicModelClient("test-key", llm_server.url, stream_api=stream_api)
    try:
        events, response = await run(client, make_request(thinking_budget=2048))
    finally:
        await client.aclose()
    thinking = [e for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(e.text for e in thinking) == "I should read the module first."
    assert [e for e in events if isinstance(e, ThinkingSignature)] == [
        ThinkingSignature("sig-abc", 0)
    ]
    assert [e for e in events if isinstance(e, ToolUseStarted)] == [
        ToolUseStarted("toolu_42", "read_file", 2)
    ]
    pieces = [e for e in events if isinstance(e, ToolUseInputDelta)]
    assert len(pieces) > 5 and all(p.id == "toolu_42" for p in pieces)
    assert json.loads("".join(p.partial_json for p in pieces)) == tool_input
    assert response.content == [
        {"type": "thinking", "thinking": "I should read the module first.", "signature": "sig-abc"},
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_42", "name": "read_file", "input": tool_input},
    ]
    assert response.stop_reason == "tool_use"
    assert response.tool_uses == [response.content[2]]
    assert llm_server.model_requests[0].thinking == {"type": "enabled", "budget_tokens": 2048}


@pytest.mark.parametrize(
    "stop_reason", ["end_turn", "max_tokens", "tool_use", "refusal", "stop_sequence"]
)
async def test_each_stop_reason(llm_server: ScriptedLLMServer, stop_reason: str) -> None:
    turn = Turn().text("some text")
    turn.stop(stop_reason, stop_sequence="###" if stop_reason == "stop_sequence" else None)
    llm_server.script.add(turn)
    client = AnthropicModelClient("test-key", llm_server.url)
    try:
        _, response = await run(client)
    finally:
        await client.aclose()
    assert response.stop_reason == stop_reason
    assert response.stop_sequence == ("###" if stop_reason == "stop_sequence" else None)


async def test_usage_numbers(llm_server: ScriptedLLMServer, stream_api: StreamApi) -> None:
    llm_server.script.add(
        Turn()
        .text("ok")
        .usage(
            input_tokens=1200,
            output_tokens=34,
            cache_read_input_tokens=900,
            cache_creation_input_tokens=55,
        )
    )
    client = AnthropicModelClient("test-key", llm_server.url, stream_api=stream_api)
    try:
        _, response = await run(client)
    finally:
        await client.aclose()
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens) == (1200, 34)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (900, 55)
    assert usage.total_tokens == 1200 + 34 + 900 + 55
    assert response.model == "claude-test" and response.message_id.startswith("msg_")


async def test_request_carries_system_tools_and_cache_breakpoints(
    llm_server: ScriptedLLMServer,
) -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
    ]
    request = make_request(messages=history)
    client = AnthropicModelClient("test-key", llm_server.url)
    try:
        await run(client, request)
    finally:
        await client.aclose()
    recorded = llm_server.model_requests[0]
    assert recorded.streaming and recorded.path == "/v1/messages"
    assert recorded.api_key == "test-key"  # this SDK release sends it as a bearer token
    assert recorded.system == [
        {"type": "text", "text": "You are an IaC agent.", "cache_control": {"type": "ephemeral"}}
    ]
    assert recorded.tool_names == ["read_file"]
    assert recorded.tools[-1]["cache_control"] == {"type": "ephemeral"}
    last_block = recorded.messages[-1]["content"][-1]
    assert last_block["type"] == "tool_result" and last_block["cache_control"] == {
        "type": "ephemeral"
    }
    assert recorded.messages[0] == {"role": "user", "content": "first"}  # earlier turns untouched
    assert "cache_control" not in history[-1]["content"][-1]  # the caller's history is not mutated


def test_build_params_without_caching_and_with_temperature() -> None:
    params = build_params(
        make_request(temperature=0.2, stop_sequences=["END"]), prompt_caching=False
    )
    assert params["system"] == "You are an IaC agent."
    assert params["messages"] == [{"role": "user", "content": "Write a Terraform VPC"}]
    assert "cache_control" not in params["tools"][-1]
    assert params["extra_body"] == {"temperature": 0.2}
    assert params["stop_sequences"] == ["END"]
    assert "thinking" not in params


async def test_auth_error_is_not_retryable(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().http_error(401, "invalid x-api-key"))
    client = AnthropicModelClient("bad-key", llm_server.url)
    with anyio.fail_after(120), pytest.raises(ModelAuthError) as caught:
        await run(client)
    await client.aclose()
    assert not caught.value.retryable and caught.value.status_code == 401
    assert "invalid x-api-key" in str(caught.value)


async def test_missing_api_key_fails_before_any_request(llm_server: ScriptedLLMServer) -> None:
    with pytest.raises(ModelAuthError, match="ANTHROPIC_API_KEY"):
        await run(AnthropicModelClient(None, llm_server.url))
    assert llm_server.requests == []


@pytest.mark.parametrize(
    ("status", "expected", "retryable"),
    [
        (429, "ModelRateLimitError", True),
        (500, "ModelServerError", True),
        (529, "ModelServerError", True),
        (400, "ModelRequestError", False),
        (403, "ModelAuthError", False),
    ],
)
async def test_http_status_mapping(
    llm_server: ScriptedLLMServer, status: int, expected: str, retryable: bool
) -> None:
    llm_server.script.add(Turn().http_error(status, retry_after=3 if status == 429 else None))
    client = AnthropicModelClient("test-key", llm_server.url)
    with anyio.fail_after(120), pytest.raises(Exception) as caught:
        await run(client)
    await client.aclose()
    assert type(caught.value).__name__ == expected
    assert caught.value.retryable is retryable  # type: ignore[attr-defined]
    if status == 429:
        assert caught.value.retry_after == 3.0  # type: ignore[attr-defined]


async def test_stream_error_after_partial_text(
    llm_server: ScriptedLLMServer, stream_api: StreamApi
) -> None:
    llm_server.script.add(
        Turn().text("partial answer", chunks=3).stream_error("overloaded_error", "Overloaded")
    )
    client = AnthropicModelClient("test-key", llm_server.url, stream_api=stream_api)
    seen: list[StreamEvent] = []
    with anyio.fail_after(120), pytest.raises(ModelServerError, match="Overloaded"):
        async with aclosing(client.stream(make_request())) as stream:
            async for event in stream:
                seen.append(event)
    await client.aclose()
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "partial answer"


async def test_truncated_stream(llm_server: ScriptedLLMServer, stream_api: StreamApi) -> None:
    llm_server.script.add(Turn().text("abcdefgh", chunks=8).truncate_after(5))
    client = AnthropicModelClient("test-key", llm_server.url, stream_api=stream_api)
    with anyio.fail_after(120), pytest.raises(ModelResponseError, match="cut off") as caught:
        await run(client)
    await client.aclose()
    assert caught.value.retryable


async def test_stream_ending_cleanly_before_message_stop(llm_server: ScriptedLLMServer) -> None:
    # A garbage body that is a well-formed but incomplete event stream.
    start = {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {}}}
    body = f"event: message_start\ndata: {json.dumps(start)}\n\n"
    llm_server.script.add(Turn().garbage(body))
    client = AnthropicModelClient("test-key", llm_server.url)
    with anyio.fail_after(120), pytest.raises(ModelResponseError, match="before message_stop"):
        await run(client)
    await client.aclose()


@pytest.mark.parametrize("garbage", ["", "<html>502 Bad Gateway</html>\n"])
async def test_garbage_response(
    llm_server: ScriptedLLMServer, stream_api: StreamApi, garbage: str
) -> None:
    llm_server.script.add(Turn().garbage(garbage))  # "" → the default garbage (invalid JSON data)
    client = AnthropicModelClient("test-key", llm_server.url, stream_api=stream_api)
    with anyio.fail_after(120), pytest.raises(ModelResponseError) as caught:
        await run(client)
    await client.aclose()
    assert not caught.value.retryable


async def test_connection_refused() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = AnthropicModelClient("test-key", f"http://127.0.0.1:{port}")
    with anyio.fail_after(120), pytest.raises(ModelConnectionError) as caught:
        await run(client)
    await client.aclose()
    # Nothing listens there: retrying would only delay the error (issue 8, item 15).
    assert not caught.value.retryable
    assert "Connection refused" in str(caught.value)


async def test_read_timeout_on_a_slow_endpoint(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().text("late").timing(latency=5.0))
    client = AnthropicModelClient("test-key", llm_server.url, timeout=0.2)
    with anyio.fail_after(120), pytest.raises(ModelConnectionError, match="in time"):
        await run(client)
    await client.aclose()


async def test_cancellation_during_a_slow_stream(
    llm_server: ScriptedLLMServer, stream_api: StreamApi
) -> None:
    llm_server.script.add(Turn().text("y" * 50, chunks=50).timing(chunk_delay=0.2))
    client = AnthropicModelClient("test-key", llm_server.url, stream_api=stream_api)
    received: list[StreamEvent] = []
    with anyio.fail_after(60):
        with anyio.move_on_after(0.5) as scope:
            async with aclosing(client.stream(make_request())) as stream:
                async for event in stream:
                    received.append(event)
        await client.aclose()
    assert scope.cancelled_caught
    assert not any(isinstance(e, MessageFinished) for e in received)


async def test_exhausted_error_script_is_a_request_error() -> None:
    from acp_scripted_llm import Script

    with ScriptedLLMServer(Script([], fallback="error")) as server:
        client = AnthropicModelClient("test-key", server.url)
        with anyio.fail_after(120), pytest.raises(ModelRequestError):
            await run(client)
        await client.aclose()


@pytest.mark.subprocess
def test_module_import_does_not_import_the_sdk() -> None:
    code = (
        "import sys\n"
        "import iac_code.llm, iac_code.llm.anthropic_client, iac_code.llm.retry\n"
        "client = iac_code.llm.AnthropicModelClient('k', 'http://127.0.0.1:1')\n"
        "heavy = [m for m in ('anthropic', 'httpx2', 'httpx', 'pydantic') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


@pytest.fixture
def bench_server_url(tmp_path: Path) -> Iterator[str]:
    """A server process (as in the relay benchmark) scripted with 20,000-chunk text turns."""
    turn = {"content": [{"type": "text", "text": "x" * BENCH_CHUNKS, "chunk_size": 1}]}
    script = tmp_path / "bench.json"
    script.write_text(json.dumps({"turns": ["warm-up", turn] * len(STREAM_APIS)}))
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_scripted_llm", "--script", str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        yield process.stdout.readline().strip()
        process.stdin.close()
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)


BENCH_CHUNKS = 20_000


@pytest.mark.subprocess
async def test_print_relay_throughput(bench_server_url: str) -> None:
    """Prints text deltas/s through AnthropicModelClient for 20,000 one-character chunks, per
    stream_api, the server in its own process. Informational: printed, not asserted."""
    for api in STREAM_APIS:
        client = AnthropicModelClient("test-key", bench_server_url, stream_api=api)
        with anyio.fail_after(120):  # SDK import and connection set-up are not measured
            await collect(client.stream(make_request()))
        count = 0
        started = time.perf_counter()
        with anyio.fail_after(60):
            async with aclosing(client.stream(make_request())) as stream:
                async for event in stream:
                    if isinstance(event, TextDelta):
                        count += 1
        rate = count / (time.perf_counter() - started)
        await client.aclose()
        assert count == BENCH_CHUNKS
        print(f"\n[throughput] stream_api={api}: {rate:,.0f} text deltas/s ({count} chunks)")
