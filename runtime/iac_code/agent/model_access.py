"""The agent's way to the model: one lazily created client, every request retried alike."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, aclosing
from typing import TYPE_CHECKING

import anyio

from iac_code.credentials import CredentialError, resolve_api_key, resolve_api_key_async
from iac_code.llm.contract import (
    MessageFinished,
    ModelClient,
    ModelRequest,
    ModelResponse,
    StreamEvent,
    collect,
)
from iac_code.llm.retry import RetryCallback, RetryNotice, stream_with_retries
from iac_code.llm.silence import QuietCallback, SilenceWatch, watch_silence

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


def log_quiet(seconds: float, deadline: float) -> None:
    log.warning("the model has sent nothing for %.0f s; giving up at %g s", seconds, deadline)


#: Where the SDK sends requests without a configured base URL.
DEFAULT_ENDPOINT = "https://api.anthropic.com"


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
        on_quiet: QuietCallback = log_quiet,
    ) -> None:
        self._settings = settings
        #: An injected client (tests, bench) or the one created on first use.
        self._client = client
        self._injected = client is not None
        #: The key the self-made client was built with (a new saved key means a new client).
        self._client_key: str | None = None
        self._on_retry = on_retry
        self._on_quiet = on_quiet

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (for messages)."""
        return self._settings.base_url or DEFAULT_ENDPOINT

    def silence_watch(self) -> AbstractAsyncContextManager[SilenceWatch]:
        """Watch the model calls made in the block: ``on_quiet`` after the configured quiet
        time, a non-retryable ModelConnectionError once the model sent nothing for
        ``model_timeout`` seconds (see :mod:`iac_code.llm.silence`). The block calls
        ``heard()`` on the watch for every event."""
        return watch_silence(
            notice_after=self._settings.model_notice_after,
            deadline=self._settings.model_timeout,
            on_quiet=self._on_quiet,
            endpoint=self.endpoint,
        )

    def api_key(self) -> str | None:
        """The key `credentials.resolve_api_key` finds (environment first, then the one
        saved by the terminal login); raises `CredentialError` for an unusable one.

        The saved key is looked up each time (cached by the file's stat), so a login done
        in a terminal while this agent runs is used by the next prompt. Reads a file: on the
        event loop use `ready_client` instead.
        """
        return resolve_api_key(self._settings)

    def client(self) -> ModelClient | None:
        """The model client, or None without an API key (``anthropic`` is imported here)."""
        if self._client is None:
            return self._client_for(self.api_key())
        return self._client

    async def ready_client(self) -> ModelClient | None:
        """`client` for the event loop: the key is looked up in a worker thread, and a
        client built from a saved key that has since changed is replaced."""
        if self._injected:
            return self._client
        key = await resolve_api_key_async(self._settings)
        if self._client is not None and key == self._client_key:
            return self._client
        # Not closed: another session's turn may still be streaming through it.
        self._client = None
        return self._client_for(key)

    def _client_for(self, api_key: str | None) -> ModelClient | None:
        if not api_key:
            return None
        from iac_code.llm.anthropic_client import AnthropicModelClient

        self._client = AnthropicModelClient(
            api_key=api_key,
            base_url=self._settings.base_url,
            # A backstop only: the silence watch ends a silent call first, and says so.
            timeout=self._settings.model_timeout + 30,
        )
        self._client_key = api_key
        return self._client

    def start_preload(self) -> bool:
        """Begin loading the SDK in the background (see :mod:`iac_code.llm.preload`).

        Only for the SDK client this creates itself, and only with an API key: without
        one no prompt can reach the model, so the seconds of CPU would be spent for nothing.
        """
        if self._client is not None:
            return False
        try:
            if not self.api_key():
                return False
        except CredentialError:
            return False  # said to the client on its first prompt
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
        self._injected = False
        self._client_key = None

    async def stream(
        self, client: ModelClient, request: ModelRequest
    ) -> AsyncIterator[StreamEvent | ModelResponse]:
        """Model events with transient failures retried; the final event is the response."""
        async with aclosing(self._retrying(client, request)) as events:
            async for event in events:
                yield event.response if isinstance(event, MessageFinished) else event

    @staticmethod
    async def ready(client: ModelClient) -> None:
        """Let ``client`` load what it needs (the SDK import) before a silence watch starts:
        seconds of import on a busy machine are not the model being silent."""
        ensure_ready = getattr(client, "ensure_ready", None)
        if ensure_ready is not None:
            await ensure_ready()

    async def complete(self, client: ModelClient, request: ModelRequest) -> ModelResponse:
        """One whole model response (no deltas), with the same retries as a turn's requests
        and the same silence deadline."""
        await self.ready(client)
        async with self.silence_watch() as watch:
            return await collect(_heard_by(watch, self._retrying(client, request)))

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


async def _heard_by(
    watch: SilenceWatch, events: AsyncGenerator[StreamEvent, None]
) -> AsyncGenerator[StreamEvent, None]:
    """``events``, each one reported to ``watch`` as a sign of life."""
    async with aclosing(events):
        async for event in events:
            watch.heard()
            yield event
