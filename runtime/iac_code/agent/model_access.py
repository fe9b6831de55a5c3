"""The agent's way to the model: one lazily created client, every request retried alike."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING

import anyio

from iac_code.credentials import stored_api_key
from iac_code.llm.contract import (
    MessageFinished,
    ModelClient,
    ModelRequest,
    ModelResponse,
    StreamEvent,
    collect,
)
from iac_code.llm.retry import RetryCallback, RetryNotice, stream_with_retries

if TYPE_CHECKING:
    from iac_code.settings import Settings

log = logging.getLogger(__name__)


def log_retry(notice: RetryNotice) -> None:
    log.warning(
        "model request failed (%s); retry %d of %d in %.1f s",
        notice.error,
        notice.attempt,
        notice.max_attempts,
        notice.delay,
    )


class ModelAccess:
    """Creates the model client on first use and runs requests with the retry policy.

    ``on_retry`` hears of every retry before its backoff wait (default: a log line); the
    agent can use it to tell the client, without this module knowing about the client.
    """

    def __init__(
        self,
        settings: Settings,
        client: ModelClient | None = None,
        *,
        on_retry: RetryCallback = log_retry,
    ) -> None:
        self._settings = settings
        #: An injected client (tests, bench) or the one created on first use.
        self._client = client
        self._on_retry = on_retry

    def api_key(self) -> str | None:
        """The environment's (or config file's) key, else the one saved by the terminal login.

        The saved key is read each time it is needed, so a login done in a terminal while
        this agent runs is used by the next prompt.
        """
        return self._settings.api_key or stored_api_key(self._settings.home)

    def client(self) -> ModelClient | None:
        """The model client, or None without an API key (``anthropic`` is imported here)."""
        if self._client is None:
            api_key = self.api_key()
            if not api_key:
                return None
            from iac_code.llm.anthropic_client import AnthropicModelClient

            self._client = AnthropicModelClient(api_key=api_key, base_url=self._settings.base_url)
        return self._client

    def start_preload(self) -> bool:
        """Begin loading the SDK in the background (see :mod:`iac_code.llm.preload`).

        Only for the SDK client this creates itself, and only with an API key: without
        one no prompt can reach the model, so the seconds of CPU would be spent for nothing.
        """
        if self._client is not None or not self.api_key():
            return False
        from iac_code.llm.preload import PRELOADER

        client = self.client()
        warm_up = getattr(client, "warm_up", None)
        if warm_up is None:
            return False
        PRELOADER.start(warm_up)
        return True

    def forget_client(self) -> None:
        """Drop the current client; the next use creates one from the settings again."""
        self._client = None

    async def stream(
        self, client: ModelClient, request: ModelRequest
    ) -> AsyncIterator[StreamEvent | ModelResponse]:
        """Model events with transient failures retried; the final event is the response."""
        async with aclosing(self._retrying(client, request)) as events:
            async for event in events:
                yield event.response if isinstance(event, MessageFinished) else event

    async def complete(self, client: ModelClient, request: ModelRequest) -> ModelResponse:
        """One whole model response (no deltas), with the same retries as a turn's requests."""
        return await collect(self._retrying(client, request))

    async def aclose(self) -> None:
        close_client = getattr(self._client, "aclose", None)
        if close_client is not None:
            with anyio.move_on_after(1):
                await close_client()

    def _retrying(
        self, client: ModelClient, request: ModelRequest
    ) -> AsyncGenerator[StreamEvent, None]:
        return stream_with_retries(
            client, request, base_delay=self._settings.retry_base_delay, on_retry=self._on_retry
        )
