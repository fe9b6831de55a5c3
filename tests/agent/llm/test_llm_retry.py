"""`stream_with_retries`: transient failures are retried (instant sleep), never after output."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.llm import (
    MessageFinished,
    ModelAuthError,
    ModelRateLimitError,
    ModelRequest,
    ModelServerError,
    StreamEvent,
    TextDelta,
)
from iac_code.llm.anthropic_client import AnthropicModelClient
from iac_code.llm.retry import RetryNotice, backoff_delay, stream_with_retries
from iac_code_dev.fake_llm import ScriptedModelClient

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(model="m", messages=[{"role": "user", "content": "hello"}])


class InstantSleep:
    """Records requested delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


async def consume(events_source: AsyncGenerator[StreamEvent, None]) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    with anyio.fail_after(60):
        async with aclosing(events_source) as stream:
            async for event in stream:
                events.append(event)
    return events


async def test_rate_limit_then_success_is_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().http_error(429, retry_after=2), Turn().text("finally"))
    client = AnthropicModelClient("k", llm_server.url)
    sleep = InstantSleep()
    notices: list[RetryNotice] = []
    events = await consume(
        stream_with_retries(
            client, REQUEST, sleep=sleep, on_retry=notices.append, jitter=lambda: 0.0
        )
    )
    await client.aclose()
    assert isinstance(events[-1], MessageFinished) and events[-1].response.text == "finally"
    assert len(llm_server.model_requests) == 2
    assert sleep.delays == [2.0]  # retry-after (2 s) beats the first backoff (0.5 s)
    assert len(notices) == 1 and isinstance(notices[0].error, ModelRateLimitError)
    assert notices[0].attempt == 1 and notices[0].delay == 2.0


async def test_async_on_retry_callback_is_awaited() -> None:
    client = ScriptedModelClient([Turn().http_error(529), Turn().http_error(500), "ok"])
    seen: list[int] = []

    async def on_retry(notice: RetryNotice) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(notice.attempt)

    events = await consume(
        stream_with_retries(client, REQUEST, sleep=InstantSleep(), on_retry=on_retry)
    )
    assert seen == [1, 2]
    assert isinstance(events[-1], MessageFinished)


async def test_auth_error_is_raised_without_retry(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(Turn().http_error(401), Turn().text("never"))
    client = AnthropicModelClient("k", llm_server.url)
    sleep = InstantSleep()
    with pytest.raises(ModelAuthError):
        await consume(stream_with_retries(client, REQUEST, sleep=sleep))
    await client.aclose()
    assert sleep.delays == []
    assert len(llm_server.model_requests) == 1


async def test_failure_after_partial_text_is_not_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.script.add(
        Turn().text("half of it", chunks=2).stream_error("api_error", "Internal"),
        Turn().text("a duplicate answer"),
    )
    client = AnthropicModelClient("k", llm_server.url)
    sleep = InstantSleep()
    seen: list[StreamEvent] = []
    with anyio.fail_after(60), pytest.raises(ModelServerError) as caught:
        async with aclosing(stream_with_retries(client, REQUEST, sleep=sleep)) as stream:
            async for event in stream:
                seen.append(event)
    await client.aclose()
    assert caught.value.retryable and caught.value.partial_output
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "half of it"
    assert sleep.delays == [] and len(llm_server.model_requests) == 1


async def test_truncation_before_any_output_is_retried() -> None:
    # Cut after message_start + ping: nothing reached the caller yet.
    client = ScriptedModelClient([Turn().text("abc").truncate_after(2), "whole answer"])
    events = await consume(stream_with_retries(client, REQUEST, sleep=InstantSleep()))
    assert isinstance(events[-1], MessageFinished) and events[-1].response.text == "whole answer"
    assert len(client.requests) == 2


async def test_attempts_are_bounded() -> None:
    client = ScriptedModelClient([Turn().http_error(500)] * 10)
    sleep = InstantSleep()
    with pytest.raises(ModelServerError):
        await consume(stream_with_retries(client, REQUEST, max_attempts=3, sleep=sleep))
    assert len(client.requests) == 3 and len(sleep.delays) == 2


async def test_total_time_budget_stops_retrying() -> None:
    now = [0.0]

    async def sleep(delay: float) -> None:
        now[0] += delay  # a fake clock that the injected sleep advances

    client = ScriptedModelClient([Turn().http_error(529)] * 20)
    with pytest.raises(ModelServerError):
        await consume(
            stream_with_retries(
                client,
                REQUEST,
                max_attempts=20,
                base_delay=1.0,
                max_delay=20.0,
                max_total=60.0,
                sleep=sleep,
                clock=lambda: now[0],
            )
        )
    assert now[0] <= 60.0
    assert 2 < len(client.requests) < 20


async def test_retry_after_beyond_the_budget_gives_up_at_once() -> None:
    client = ScriptedModelClient([Turn().http_error(429, retry_after=3600), "never"])
    sleep = InstantSleep()
    with pytest.raises(ModelRateLimitError):
        await consume(stream_with_retries(client, REQUEST, sleep=sleep))
    assert sleep.delays == []


async def test_cancellation_during_backoff_ends_promptly() -> None:
    client = ScriptedModelClient([Turn().http_error(503), "never reached"])
    with anyio.fail_after(60):
        with anyio.move_on_after(0.2) as scope:  # the real anyio.sleep(30 s) backoff is cancelled
            await consume(
                stream_with_retries(
                    client, REQUEST, base_delay=30.0, max_delay=30.0, jitter=lambda: 1.0
                )
            )
    assert scope.cancelled_caught
    assert len(client.requests) == 1


def test_backoff_delay_grows_caps_and_jitters() -> None:
    low = [
        backoff_delay(n, base_delay=1.0, max_delay=8.0, retry_after=None, jitter=lambda: 0.0)
        for n in range(1, 7)
    ]
    assert low == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    high = backoff_delay(3, base_delay=1.0, max_delay=8.0, retry_after=None, jitter=lambda: 0.999)
    assert 3.9 < high < 4.0
    assert backoff_delay(1, base_delay=1.0, max_delay=8.0, retry_after=5.0) == 5.0
