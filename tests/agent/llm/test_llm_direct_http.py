"""The straight-HTTP path used while the SDK still loads behaves exactly like the SDK path:
same request body, same events, same errors (class, retryability, message) for every kind of
answer the scripted endpoint can give."""

from __future__ import annotations

import re
import socket
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.llm import anthropic_client
from iac_code.llm.anthropic_client import AnthropicModelClient
from iac_code.llm.base import ModelError, ModelRequest, StreamEvent

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(
    model="claude-test",
    messages=[{"role": "user", "content": "hi"}],
    system="be brief",
    tools=[{"name": "t", "description": "d", "input_schema": {"type": "object"}}],
    max_tokens=64,
    temperature=0.5,
)

ANSWERS: dict[str, Any] = {
    "text": Turn().text("Plans first.", chunks=3),
    "tool": Turn().tool_use("read_file", {"path": "main.tf"}, id="toolu_1"),
    "thinking": Turn().thinking("hmm").text("ok"),
    "401": Turn().http_error(401, "invalid x-api-key", error_type="authentication_error"),
    "429": Turn().http_error(429, "slow down", error_type="rate_limit_error", retry_after=7),
    "500": Turn().http_error(500, "boom", error_type="api_error"),
    "400": Turn().http_error(400, "bad request", error_type="invalid_request_error"),
    "stream_error": Turn().text("partial").stream_error("overloaded_error", "Overloaded"),
    "truncated": Turn().text("a b c d", chunks=4).truncate_after(3),
    "garbage": Turn().garbage(),
}


async def _run(client: AnthropicModelClient) -> tuple[list[Any], Any]:
    events: list[StreamEvent] = []
    error: Any = None
    try:
        async for event in client.stream(REQUEST):
            events.append(event)
    except ModelError as exc:
        error = (type(exc), exc.retryable, str(exc), getattr(exc, "retry_after", None))
    finally:
        await client.aclose()
    # Each response of the scripted server has its own message id; nothing else may differ.
    return [re.sub(r"msg_scripted_\d+", "msg", repr(e)) for e in events], error


async def _both(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[tuple[list[Any], Any], tuple[list[Any], Any]]:
    monkeypatch.setattr(anthropic_client, "preload_under_way", lambda: True)
    direct = await _run(AnthropicModelClient("test-key", url))
    monkeypatch.setattr(anthropic_client, "preload_under_way", lambda: False)
    sdk = await _run(AnthropicModelClient("test-key", url))
    return direct, sdk


@pytest.mark.parametrize("name", list(ANSWERS))
async def test_direct_http_matches_the_sdk_path(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    answer = ANSWERS[name].to_dict()
    with ScriptedLLMServer([answer, answer]) as server:
        direct, sdk = await _both(server.url, monkeypatch)
        first, second = server.model_requests
    assert direct == sdk
    assert first.body == second.body  # the very same JSON body
    assert first.api_key == "test-key" and first.headers.get("anthropic-version")
    assert first.body["stream"] is True and first.body["temperature"] == 0.5


async def test_direct_http_reports_a_closed_port_like_the_sdk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    direct, sdk = await _both(f"http://127.0.0.1:{port}", monkeypatch)
    assert direct == sdk
    assert direct[1][1] is False  # nothing listens: not worth retrying
