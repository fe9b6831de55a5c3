"""`ModelClient` over the `anthropic` SDK (Messages API, streaming).

The SDK costs about a second to import, so it is imported on the first call, never at module
import. The SDK's own retries are disabled (`max_retries=0`): `retry.stream_with_retries`
owns retrying, because only it knows whether output already reached the user.

Three ways to read the stream (`stream_api`), all sending the same request through the SDK
(auth headers, base URL, HTTP status errors):

- ``"sse"`` (default): the SDK's raw HTTP response, event stream decoded here with
  `json.loads`. Fastest by far (measured in tests/llm): the SDK's typed events build a
  pydantic object per delta.
- ``"raw"``: ``messages.create(stream=True)``, the SDK's typed event iterator.
- ``"helper"``: ``messages.stream(...)``, the SDK's accumulating helper (slowest; it also
  rebuilds the message snapshot on every delta).
"""

from __future__ import annotations

import email.utils
import json
import os
import socket
import ssl
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio

from iac_code.unicode_text import clean_json

from .assembler import StreamAssembler, error_from_api
from .contract import (
    NO_API_KEY_MESSAGE,
    ContentBlock,
    Message,
    ModelAuthError,
    ModelConnectionError,
    ModelError,
    ModelRequest,
    ModelResponseError,
    StreamEvent,
)
from .preload import hurry

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

StreamApi = Literal["sse", "raw", "helper"]

#: The answer of the in-memory transport that `AnthropicModelClient.warm_up` streams from.
_WARM_UP_STREAM = b"".join(
    b"event: " + kind.encode() + b"\ndata: " + json.dumps(data).encode() + b"\n\n"
    for kind, data in (
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_warm_up",
                    "type": "message",
                    "role": "assistant",
                    "model": "warm-up",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 1, "output_tokens": 0},
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "ok"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    )
)
CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
# Block types the API refuses cache_control on.
_UNCACHEABLE_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def preload_sdk() -> None:
    """Import the SDK now (e.g. from a background thread after start-up), so that the
    first model call does not pay the import cost on the user's first prompt."""
    import anthropic  # noqa: F401
    import httpx2  # noqa: F401


class AnthropicModelClient:
    """Streams Messages API responses as `StreamEvent`s.

    `base_url` is the endpoint root without ``/v1`` (``ANTHROPIC_BASE_URL``); `timeout` is
    the read timeout in seconds between bytes, `connect_timeout` the connect timeout.
    """

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        *,
        timeout: float = 120.0,
        connect_timeout: float = 10.0,
        prompt_caching: bool = True,
        stream_api: StreamApi = "sse",
    ) -> None:
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self._prompt_caching = prompt_caching
        self._stream_api = stream_api
        self._sdk_client: AsyncAnthropic | None = None
        self._sdk_lock = threading.Lock()  # the client may be built by the preload thread

    def _new_sdk_client(self, **extra: Any) -> AsyncAnthropic:
        import anthropic  # deferred: see the module docstring
        import httpx2

        from iac_code import secret_env

        headers = secret_env.custom_headers()
        if headers:  # the SDK reads them from os.environ, which no longer holds them
            extra = {**extra, "default_headers": {**headers, **extra.get("default_headers", {})}}
        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self._base_url,
            max_retries=0,
            timeout=httpx2.Timeout(self._timeout, connect=self._connect_timeout),
            **extra,
        )

    def prepare(self) -> None:
        """Import the SDK and build its client (any thread; the import is the slow part)."""
        preload_sdk()
        with self._sdk_lock:
            if self._sdk_client is None:
                self._sdk_client = self._new_sdk_client()

    def _sdk(self) -> AsyncAnthropic:
        if self._sdk_client is None:
            self.prepare()
        assert self._sdk_client is not None
        return self._sdk_client

    def warm_up(self, checkpoint: Callable[[], None] = lambda: None) -> None:
        """Get everything the first request needs ready, in the calling (non-loop) thread.

        Builds the client, then streams one made-up request through the same code path as
        a real one, but over an in-memory transport (no network), on a private event loop:
        the SDK's request building and header caches, the HTTP client's stream reading and
        this module's decoding all have their one-time costs paid here. ``checkpoint`` is
        called between the steps (the preload pauses there while the agent is busy).
        """
        self.prepare()
        checkpoint()
        import asyncio

        import httpx2

        def answer(_request: Any) -> Any:
            return httpx2.Response(
                200, headers={"content-type": "text/event-stream"}, content=_WARM_UP_STREAM
            )

        async def one_request() -> None:
            http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
            sdk = self._new_sdk_client(http_client=http_client)
            request = ModelRequest(
                model="warm-up",
                messages=[{"role": "user", "content": "warm-up"}],
                system="warm-up",
                tools=[{"name": "t", "description": "d", "input_schema": {"type": "object"}}],
            )
            try:
                async for _event in self._stream_with(sdk, request):
                    pass
            finally:
                await sdk.close()

        asyncio.run(one_request())
        checkpoint()

    async def aclose(self) -> None:
        """Close the SDK's connection pool (if a call ever created it)."""
        if self._sdk_client is not None:
            await self._sdk_client.close()
            self._sdk_client = None

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        return self._stream(request)

    async def ensure_ready(self) -> None:
        """Load the SDK if no call has yet. Callers that time the model's silence await this
        first: the import takes seconds on a busy machine, and that is not the model being
        quiet."""
        if not self._api_key:
            raise ModelAuthError(NO_API_KEY_MESSAGE)
        if self._sdk_client is None:
            # The first call imports the SDK (seconds on a busy machine) in a worker thread:
            # on the event loop it would hold up every other request meanwhile, a
            # session/cancel of this very turn included. A cancel abandons the wait; the
            # import finishes in the background and the next call finds it done. A
            # background preload (iac_code.llm.preload) may be under way: it must not pause.
            hurry()
            await anyio.to_thread.run_sync(self.prepare, abandon_on_cancel=True)

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        await self.ensure_ready()
        async for event in self._stream_with(self._sdk(), request):
            yield event

    async def _stream_with(
        self, client: AsyncAnthropic, request: ModelRequest
    ) -> AsyncGenerator[StreamEvent, None]:
        params = build_params(request, prompt_caching=self._prompt_caching)
        assembler = StreamAssembler()
        try:
            if self._stream_api == "sse":
                async with client.messages.with_streaming_response.create(
                    stream=True, **params
                ) as response:
                    async for data in _decode_sse(response.http_response.aiter_lines()):
                        event = assembler.feed(data)
                        if event is not None:
                            yield event
            elif self._stream_api == "raw":
                raw_stream = await client.messages.create(stream=True, **params)
                async with raw_stream:
                    async for sdk_event in raw_stream:
                        event = _feed_sdk_event(assembler, sdk_event)
                        if event is not None:
                            yield event
            else:
                async with client.messages.stream(**params) as helper_stream:
                    async for sdk_event in helper_stream:
                        event = _feed_sdk_event(assembler, sdk_event)
                        if event is not None:
                            yield event
        except ModelError:
            raise
        except Exception as exc:
            raise map_sdk_error(exc, stream_started=assembler.started) from exc
        assembler.check_complete()


# ---- request building ----------------------------------------------------------------


def build_params(request: ModelRequest, *, prompt_caching: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``messages.create``/``messages.stream``.

    With `prompt_caching`, cache breakpoints go on the system prompt, the last tool and the
    last block of the last message (3 of the API's 4), so each call re-reads the previous
    call's prefix from cache. The request's own lists are never mutated. Lone surrogates
    are replaced (U+FFFD) in everything sent: one cannot be encoded as UTF-8, and a history
    stored before they were replaced on entry would otherwise fail every request.
    """
    messages = clean_json(request.messages)
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": _mark_last_message(messages) if prompt_caching else messages,
    }
    if request.system:
        params["system"] = _system_blocks(clean_json(request.system), prompt_caching)
    if request.tools:
        tools = [dict(tool) for tool in clean_json(request.tools)]
        if prompt_caching:
            tools[-1]["cache_control"] = CACHE_CONTROL
        params["tools"] = tools
    if request.thinking_budget:
        params["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
    if request.stop_sequences:
        params["stop_sequences"] = list(request.stop_sequences)
    if request.temperature is not None:
        # This SDK release has no `temperature` argument; the API still accepts the field.
        params["extra_body"] = {"temperature": request.temperature}
    return params


def _system_blocks(system: str | list[ContentBlock], caching: bool) -> str | list[ContentBlock]:
    if isinstance(system, str):
        if not caching:
            return system
        return [{"type": "text", "text": system, "cache_control": CACHE_CONTROL}]
    blocks = [dict(block) for block in system]
    if caching and blocks:
        blocks[-1]["cache_control"] = CACHE_CONTROL
    return blocks


def _mark_last_message(messages: list[Message]) -> list[Message]:
    if not messages:
        return messages
    last = messages[-1]
    content = last.get("content")
    if isinstance(content, str):
        if not content:
            return messages
        blocks: list[ContentBlock] = [{"type": "text", "text": content}]
    elif isinstance(content, list) and content:
        blocks = list(content)
    else:
        return messages
    if blocks[-1].get("type") in _UNCACHEABLE_BLOCKS:
        return messages
    blocks[-1] = {**blocks[-1], "cache_control": CACHE_CONTROL}
    return [*messages[:-1], {**last, "content": blocks}]


# ---- response decoding ---------------------------------------------------------------


async def _decode_sse(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """Yield the JSON ``data`` of each server-sent event (``event:`` names are redundant
    with the data's ``type``; comments and other fields are skipped)."""
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        elif not line and data:  # a blank line ends an event
            yield _parse_event_data(data)
            data = []
    if data:
        yield _parse_event_data(data)


def _parse_event_data(data: list[str]) -> dict[str, Any]:
    try:
        parsed = json.loads(data[0] if len(data) == 1 else "\n".join(data))
    except ValueError:
        raise ModelResponseError("the model stream contained data that is not JSON") from None
    if not isinstance(parsed, dict):
        raise ModelResponseError("the model stream contained an event that is not an object")
    return parsed


def _feed_sdk_event(assembler: StreamAssembler, event: Any) -> StreamEvent | None:
    """Apply one SDK event object (raw, or the helper's richer events) to `assembler`."""
    kind = event.type
    if kind == "content_block_delta":
        delta = event.delta
        dtype = delta.type
        if dtype == "text_delta":
            return assembler.text(event.index, delta.text)
        if dtype == "input_json_delta":
            return assembler.input_json(event.index, delta.partial_json)
        if dtype == "thinking_delta":
            return assembler.thinking(event.index, delta.thinking)
        if dtype == "signature_delta":
            return assembler.signature(event.index, delta.signature)
        return None
    if kind == "content_block_start":
        return assembler.block_start(event.index, event.content_block.to_dict())
    if kind == "content_block_stop":
        return assembler.block_stop(event.index)
    if kind == "message_start":
        message = event.message
        assembler.start(message.id, message.model, message.usage.to_dict())
        return None
    if kind == "message_delta":
        assembler.message_delta(
            event.delta.stop_reason, event.delta.stop_sequence, event.usage.to_dict()
        )
        return None
    if kind == "message_stop":
        return assembler.message_stop()
    return None  # the helper's derived events (text, input_json, ...) repeat the deltas


# ---- errors --------------------------------------------------------------------------


def map_sdk_error(exc: Exception, *, stream_started: bool = False) -> ModelError:
    """Translate SDK / HTTP-layer exceptions into `ModelError`s.

    ``stream_started``: the answer's ``message_start`` had arrived, so a transport failure
    now is a stream cut off mid-way (retryable), whichever wrapper the SDK put around it
    (anthropic 2.17 wraps errors raised while iterating in ``APIConnectionError``).
    """
    import anthropic
    import httpx2

    cause = exc.__cause__ if isinstance(exc, anthropic.APIConnectionError) else exc
    cut_off = isinstance(cause, httpx2.TransportError) and not isinstance(
        cause, httpx2.TimeoutException
    )
    if stream_started and cut_off:
        return ModelResponseError(f"The model stream was cut off: {cause}", retryable=True)

    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, Mapping) else {}
        raw_error = body.get("error")
        error: Mapping[str, Any] = raw_error if isinstance(raw_error, Mapping) else {}
        detail = error.get("message") or exc.message
        status = exc.status_code if exc.status_code >= 400 else None  # 200 = error event
        message = (
            f"The model API answered {status}: {detail}"
            if status
            else f"The model API reported an error in the stream: {detail}"
        )
        if status == 404:
            message = _not_found_message(exc, detail)
        return error_from_api(
            status, error.get("type"), message, retry_after=parse_retry_after(exc.response.headers)
        )
    if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
        return ModelConnectionError("The model API did not answer in time.")
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc
        if isinstance(cause, httpx2.ConnectError | httpx2.UnsupportedProtocol | httpx2.InvalidURL):
            # Refused, no route, unknown host, failed TLS handshake, an address that is
            # not one: waiting will not change any of that. Fail at once instead of
            # retrying for a minute, and say what to look at.
            reason, check = _connect_failure(cause)
            return ModelConnectionError(
                f"Could not connect to the model API at {_endpoint(exc)}: {reason}; {check}",
                retryable=False,
            )
        return ModelConnectionError(f"Could not reach the model API at {_endpoint(exc)}: {cause}")
    if isinstance(exc, httpx2.TransportError):  # dropped mid-body, incomplete chunked read
        return ModelResponseError(f"The model stream was cut off: {exc}", retryable=True)
    if isinstance(exc, anthropic.APIResponseValidationError | ValueError):
        return ModelResponseError(f"The model API sent an unusable response: {exc}")
    return ModelError(f"The model call failed: {exc!r}")


def _endpoint(exc: Exception) -> str:
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    if url is None:
        return "the configured address"
    return f"{url.scheme}://{url.netloc.decode() if isinstance(url.netloc, bytes) else url.netloc}"


#: How the user names the endpoint, in every message that asks them to check it.
_BASE_URL_SOURCES = "ANTHROPIC_BASE_URL, --base-url or base_url in config.toml"


def _connect_failure(cause: BaseException) -> tuple[str, str]:
    """What went wrong connecting, and what the user should check."""
    chain: list[BaseException] = []
    seen: BaseException | None = cause
    while seen is not None and len(chain) < 20:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    tls = next((error for error in chain if isinstance(error, ssl.SSLError)), None)
    if tls is not None or "SSL" in str(cause):
        reason = f"the TLS handshake failed ({(tls.reason if tls else None) or tls or cause})"
        return reason, (
            f"check http:// versus https:// in the base URL ({_BASE_URL_SOURCES}) and"
            " that the endpoint's certificate is trusted"
        )
    reason = _reason(cause)
    if any(isinstance(error, socket.gaierror) for error in chain):
        return reason, f"check the host name in the base URL ({_BASE_URL_SOURCES}) and DNS"
    return reason, (
        f"check the base URL ({_BASE_URL_SOURCES}) and that the endpoint is running there"
    )


def _not_found_message(exc: Any, detail: object) -> str:
    """A 404 names the URL asked for: almost always a base URL with a wrong path."""
    request = getattr(exc.response, "request", None)
    url = str(request.url) if request is not None else "the configured endpoint"
    path = request.url.path if request is not None else ""
    base_path = path.removesuffix("/v1/messages").rstrip("/")
    if base_path.endswith("/v1"):
        check = (
            "the base URL ends in /v1, which the client adds itself: drop the /v1 suffix"
            f" ({_BASE_URL_SOURCES})"
        )
    else:
        check = f"check the base URL ({_BASE_URL_SOURCES})"
    return f"The model API answered 404 for {url} ({detail}); {check}"


def _reason(cause: BaseException) -> str:
    """The innermost OS-level reason ("Connection refused", "Name or service not known")."""
    seen: BaseException | None = cause
    reason = str(cause) or type(cause).__name__
    while seen is not None:
        if isinstance(seen, socket.gaierror):  # name lookup: negative EAI_* codes
            reason = seen.strerror or str(seen)
        elif isinstance(seen, OSError) and seen.errno and seen.errno > 0:
            # asyncio words it "Connect call failed (...)"; the errno says what happened.
            reason = os.strerror(seen.errno)
        seen = seen.__cause__ or seen.__context__
    return reason


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date)."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - time.time())
