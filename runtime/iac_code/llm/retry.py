"""Retrying model streams on transient failures, without ever duplicating output.

A failed attempt is retried only when its error is `retryable` (429, 5xx/529, connection
problems, a dropped stream) **and** no event of that attempt reached the caller yet. Once
anything was yielded, a failure is raised with ``partial_output = True``: the user has seen
part of an answer, and a second answer would follow it as a duplicate.

Backoff is exponential with jitter, honours the server's ``retry-after`` hint, and stops when
the next wait would take the whole call past `max_total` seconds. Waiting uses
`anyio.sleep`, so cancelling the caller's scope ends a backoff at once; tests inject an
instant `sleep`.
"""

from __future__ import annotations

import inspect
import random
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass

import anyio

from iac_code import telemetry

from .contract import ModelClient, ModelError, ModelRequest, StreamEvent

DEFAULT_MAX_ATTEMPTS = 6
DEFAULT_BASE_DELAY = 1.0
DEFAULT_MAX_DELAY = 20.0
DEFAULT_MAX_TOTAL = 60.0


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """Given to `on_retry` before each backoff wait."""

    attempt: int  # the attempt that failed, from 1
    max_attempts: int
    delay: float  # seconds about to be waited
    error: ModelError


RetryCallback = Callable[[RetryNotice], Awaitable[None] | None]


def backoff_delay(
    attempt: int,
    *,
    base_delay: float,
    max_delay: float,
    retry_after: float | None,
    jitter: Callable[[], float] = random.random,
) -> float:
    """Delay after failed attempt number `attempt` (1-based): ``base * 2**(n-1)`` capped
    at `max_delay`, scaled by a random factor in [0.5, 1), never below `retry_after`."""
    delay = min(max_delay, base_delay * (2 ** (attempt - 1))) * (0.5 + jitter() / 2)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay


async def stream_with_retries(
    client: ModelClient,
    request: ModelRequest,
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    base_delay: float = DEFAULT_BASE_DELAY,
    max_delay: float = DEFAULT_MAX_DELAY,
    max_total: float = DEFAULT_MAX_TOTAL,
    on_retry: RetryCallback | None = None,
    sleep: Callable[[float], Awaitable[object]] = anyio.sleep,
    clock: Callable[[], float] = time.monotonic,
    jitter: Callable[[], float] = random.random,
) -> AsyncGenerator[StreamEvent, None]:
    """Yield the events of `client.stream(request)`, retrying transient failures.

    Raises the last `ModelError` when attempts or the time budget run out, or at once for
    non-retryable errors and for any failure after output was yielded.
    """
    started = clock()
    attempt = 0
    while True:
        attempt += 1
        yielded = False
        try:
            # One chat span per attempt (telemetry; a no-op when it is off).
            with telemetry.model_call(request) as call:
                async with aclosing(client.stream(request)) as events:
                    async for event in events:
                        yielded = True
                        call.saw(event)
                        yield event
            return
        except ModelError as error:
            if yielded:
                error.partial_output = True
                raise
            if not error.retryable or attempt >= max_attempts:
                raise
            delay = backoff_delay(
                attempt,
                base_delay=base_delay,
                max_delay=max_delay,
                retry_after=error.retry_after,
                jitter=jitter,
            )
            if clock() - started + delay > max_total:
                raise
            if on_retry is not None:
                result = on_retry(RetryNotice(attempt, max_attempts, delay, error))
                if inspect.isawaitable(result):
                    await result
            await sleep(delay)
