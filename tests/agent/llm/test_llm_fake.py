"""`ScriptedModelClient` (in memory) matches the real client on the same turn data."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import anyio
import pytest
from acp_scripted_llm import Script, ScriptedLLMServer, Turn
from iac_code.llm import (
    MessageFinished,
    ModelAuthError,
    ModelClient,
    ModelRateLimitError,
    ModelRequest,
    ModelRequestError,
    ModelResponseError,
    ModelServerError,
    StreamEvent,
    TextDelta,
    collect,
)
from iac_code.llm.anthropic_client import AnthropicModelClient
from iac_code_dev.fake_llm import ScriptedModelClient

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(
    model="m",
    messages=[{"role": "user", "content": "list the modules"}],
    system="sys",
    tools=[{"name": "glob", "description": "", "input_schema": {}}],
)


def rich_turn() -> Turn:
    return (
        Turn()
        .thinking("hmm", signature="s1", chunks=2)
        .text("Looking", chunks=3)
        .tool_use("glob", {"pattern": "**/*.tf"}, id="toolu_7", chunks=4)
        .usage(input_tokens=10, output_tokens=20, cache_read_input_tokens=5)
    )


async def events_of(client: ModelClient) -> list[StreamEvent]:
    with anyio.fail_after(60):
        async with aclosing(client.stream(REQUEST)) as stream:
            return [event async for event in stream]


async def test_fake_produces_the_same_events_as_the_real_client() -> None:
    fake_events = await events_of(ScriptedModelClient([rich_turn()]))
    with ScriptedLLMServer([rich_turn()]) as server:
        real = AnthropicModelClient("k", server.url)
        real_events = await events_of(real)
        await real.aclose()

    def comparable(events: list[StreamEvent]) -> list[Any]:
        # message ids differ between the two runs; everything else must match
        return [
            (type(e).__name__, e.response.content, e.response.usage, e.response.stop_reason)
            if isinstance(e, MessageFinished)
            else e
            for e in events
        ]

    assert comparable(fake_events) == comparable(real_events)
    assert isinstance(fake_events[-1], MessageFinished)


async def test_fake_is_a_model_client_and_records_requests() -> None:
    client = ScriptedModelClient(["one", "two"])
    assert isinstance(client, ModelClient)
    assert (await collect(client.stream(REQUEST))).text == "one"
    assert (await collect(client.stream(REQUEST))).text == "two"
    assert (await collect(client.stream(REQUEST))).text == "Echo: list the modules"
    assert client.requests == [REQUEST] * 3


async def test_fake_responder_and_error_fallback() -> None:
    client = ScriptedModelClient(
        Script([lambda body: f"{len(body['tools'])} tool(s)"], fallback="error")
    )
    assert (await collect(client.stream(REQUEST))).text == "1 tool(s)"
    with pytest.raises(ModelRequestError):
        await collect(client.stream(REQUEST))


@pytest.mark.parametrize(
    ("turn", "error"),
    [
        (Turn().http_error(401), ModelAuthError),
        (Turn().http_error(429, retry_after=4), ModelRateLimitError),
        (Turn().http_error(529), ModelServerError),
        (Turn().text("x").stream_error(), ModelServerError),
        (Turn().text("abc").truncate_after(3), ModelResponseError),
        (Turn().garbage(), ModelResponseError),
    ],
)
async def test_fake_faults_raise_the_real_clients_errors(
    turn: Turn, error: type[Exception]
) -> None:
    with pytest.raises(error):
        await collect(ScriptedModelClient([turn]).stream(REQUEST))


async def test_fake_honours_chunk_delay_so_cancellation_can_be_tested() -> None:
    client = ScriptedModelClient([Turn().text("z" * 40, chunks=40).timing(chunk_delay=0.05)])
    got: list[StreamEvent] = []
    with anyio.fail_after(60):
        with anyio.move_on_after(0.3) as scope:
            async with aclosing(client.stream(REQUEST)) as stream:
                async for event in stream:
                    got.append(event)
    assert scope.cancelled_caught
    assert 0 < sum(isinstance(e, TextDelta) for e in got) < 40
    untimed = ScriptedModelClient(
        [Turn().text("z" * 40, chunks=40).timing(chunk_delay=10)], timing=False
    )
    assert (await collect(untimed.stream(REQUEST))).text == "z" * 40
