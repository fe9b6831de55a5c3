"""The Messages API request straight over HTTP, for the moments the SDK is still loading.

``import anthropic`` takes one to two seconds of CPU. When a prompt arrives right after
start-up (an editor that opens a session and sends the user's first message at once), the
background preload (:mod:`iac_code.llm.preload`) cannot be done yet. Rather than making the
user wait for it, :class:`~iac_code.llm.anthropic_client.AnthropicModelClient` then sends that
request itself with ``httpx2`` (the SDK's own HTTP library, a tenth of its import cost): the
same JSON body (`build_params`), the headers the API requires, the same event-stream decoding
and the same error mapping as the SDK path, so the agent loop cannot tell the two apart. Once
the preload has finished, every request goes through the SDK again.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any

import anyio

from .assembler import StreamAssembler, error_from_api
from .base import ModelConnectionError, ModelError, ModelResponseError, StreamEvent

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_ERROR_BODY_LIMIT = 65536


def _import_httpx() -> Any:
    import httpx2

    return httpx2


class DirectHttp:
    """One HTTP connection pool for the requests sent while the SDK loads (closed by
    :meth:`aclose`); building it costs a TLS context, so it is built once."""

    def __init__(self, read_timeout: float, connect_timeout: float) -> None:
        self._read_timeout = read_timeout
        self._connect_timeout = connect_timeout
        self._client: Any = None

    async def client(self) -> Any:
        if self._client is None:
            httpx2 = await anyio.to_thread.run_sync(_import_httpx, abandon_on_cancel=True)
            timeout = httpx2.Timeout(self._read_timeout, connect=self._connect_timeout)
            self._client = httpx2.AsyncClient(timeout=timeout)
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with anyio.CancelScope(shield=True):
                await client.aclose()


async def stream_messages(
    http: DirectHttp,
    params: dict[str, Any],
    *,
    api_key: str,
    base_url: str | None,
    decode: Callable[[AsyncIterator[str]], AsyncIterator[dict[str, Any]]],
    reason: Callable[[BaseException], str],
    retry_after: Callable[[Mapping[str, str]], float | None],
) -> AsyncGenerator[StreamEvent, None]:
    """Stream one ``POST /v1/messages`` (``params`` as for ``messages.create``)."""
    client = await http.client()
    httpx2 = _import_httpx()  # already imported by http.client()
    body = dict(params)
    body.update(body.pop("extra_body", None) or {})
    body["stream"] = True
    root = (base_url or DEFAULT_BASE_URL).rstrip("/")
    headers = {
        "x-api-key": api_key,
        "anthropic-version": API_VERSION,
        "content-type": "application/json",
        "accept": "application/json",
    }
    assembler = StreamAssembler()
    started = False
    try:
        async with client.stream(
            "POST", f"{root}/v1/messages", content=json.dumps(body), headers=headers
        ) as response:
            started = True
            if response.status_code >= 400:
                raise await _status_error(response, retry_after)
            async for data in decode(response.aiter_lines()):
                event = assembler.feed(data)
                if event is not None:
                    yield event
    except ModelError:
        raise
    except httpx2.ConnectError as exc:
        raise ModelConnectionError(
            f"Could not connect to the model API at {_origin(root)}: {reason(exc)}",
            retryable=False,
        ) from exc
    except httpx2.TimeoutException as exc:
        raise ModelConnectionError("The model API did not answer in time.") from exc
    except httpx2.TransportError as exc:
        if started:
            raise ModelResponseError(
                f"The model stream was cut off: {exc}", retryable=True
            ) from exc
        raise ModelConnectionError(f"Could not reach the model API: {exc}") from exc
    except ValueError as exc:
        raise ModelResponseError(f"The model API sent an unusable response: {exc}") from exc
    assembler.check_complete()


async def _status_error(
    response: Any, retry_after: Callable[[Mapping[str, str]], float | None]
) -> ModelError:
    raw = await response.aread()
    try:
        body = json.loads(raw[:_ERROR_BODY_LIMIT])
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    detail = error.get("message") or raw[:200].decode("utf-8", "replace") or "no detail"
    status = response.status_code
    return error_from_api(
        status,
        error.get("type"),
        f"The model API answered {status}: {detail}",
        retry_after=retry_after(response.headers),
    )


def _origin(root: str) -> str:
    scheme, _, rest = root.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}" if rest else root
