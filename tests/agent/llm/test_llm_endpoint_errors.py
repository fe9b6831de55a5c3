"""Endpoint failures name the URL and what to check, and are not retried where another try
cannot help (issue 32, item 4); the silence watch tells early and gives up at its deadline.

The real ``anthropic`` SDK against the scripted server on 127.0.0.1 where a server is needed.
"""

from __future__ import annotations

import socket
from contextlib import aclosing

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.llm import ModelConnectionError, ModelRequest, ModelRequestError
from iac_code.llm.anthropic_client import AnthropicModelClient, map_sdk_error
from iac_code.llm.silence import watch_silence

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=16)


async def _failure(base_url: str) -> Exception:
    client = AnthropicModelClient("test-key", base_url)
    try:
        with anyio.fail_after(60), pytest.raises(Exception) as caught:
            async with aclosing(client.stream(REQUEST)) as events:
                async for _ in events:
                    pass
    finally:
        await client.aclose()
    return caught.value  # type: ignore[return-value]


async def test_https_to_a_plain_http_server_is_a_tls_failure_that_says_what_to_check() -> None:
    with ScriptedLLMServer([Turn().text("never")]) as llm:
        url = llm.url.replace("http://", "https://")
        error = await _failure(url)
    assert isinstance(error, ModelConnectionError) and not error.retryable
    assert str(error).startswith(f"Could not connect to the model API at {url}: the TLS handshake")
    assert "check http:// versus https://" in str(error)


async def test_a_404_without_a_v1_suffix_names_the_url_and_the_base_url_to_check() -> None:
    with ScriptedLLMServer([Turn().text("never")]) as llm:
        url = llm.url + "/proxy"
        error = await _failure(url)
    assert isinstance(error, ModelRequestError) and not error.retryable
    assert str(error).startswith(f"The model API answered 404 for {url}/v1/messages (")
    assert str(error).endswith(
        "check the base URL (ANTHROPIC_BASE_URL, --base-url or base_url in config.toml)"
    )
    assert "drop the /v1" not in str(error)


def test_an_unknown_host_says_to_check_the_host_name_and_dns() -> None:
    # Built by hand, as the SDK chains it: no name lookup leaves this machine.
    import anthropic
    import httpx2

    request = httpx2.Request("POST", "http://no-such-host.invalid/v1/messages")
    lookup = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    connect = httpx2.ConnectError("[Errno -2] Name or service not known")
    connect.__cause__ = lookup
    wrapped = anthropic.APIConnectionError(request=request)
    wrapped.__cause__ = connect
    error = map_sdk_error(wrapped)
    assert isinstance(error, ModelConnectionError) and not error.retryable
    assert str(error) == (
        "Could not connect to the model API at http://no-such-host.invalid: Name or service not"
        " known; check the host name in the base URL (ANTHROPIC_BASE_URL, --base-url or"
        " base_url in config.toml) and DNS"
    )


def test_an_address_httpx_cannot_use_is_not_retried() -> None:
    import anthropic
    import httpx2

    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/messages")
    wrapped = anthropic.APIConnectionError(request=request)
    wrapped.__cause__ = httpx2.UnsupportedProtocol("Request URL has an unsupported protocol")
    error = map_sdk_error(wrapped)
    assert isinstance(error, ModelConnectionError) and not error.retryable


async def test_the_watch_tells_once_per_silence_and_lets_a_talking_model_finish() -> None:
    told: list[tuple[float, float]] = []
    told_event = anyio.Event()

    def on_quiet(seconds: float, deadline: float) -> None:
        told.append((seconds, deadline))
        told_event.set()

    with anyio.fail_after(30):
        async with watch_silence(
            notice_after=0.05, deadline=600, on_quiet=on_quiet, endpoint="http://x"
        ) as watch:
            await told_event.wait()  # silent: told once
            watch.heard()  # the model speaks; a new silence will be told again
            told_event = anyio.Event()
            await told_event.wait()
    assert len(told) == 2
    assert all(seconds >= 0.05 and deadline == 600 for seconds, deadline in told)


async def test_the_watch_ends_a_silent_block_with_a_clear_error() -> None:
    with anyio.fail_after(30), pytest.raises(ModelConnectionError) as caught:
        async with watch_silence(
            notice_after=10, deadline=0.1, on_quiet=lambda s, d: None, endpoint="http://x:1"
        ):
            await anyio.sleep_forever()
    assert not caught.value.retryable
    assert str(caught.value).startswith("The model API at http://x:1 sent nothing for 0.1 s;")


async def test_an_error_inside_the_watch_comes_out_as_itself() -> None:
    # Not wrapped in an ExceptionGroup by the watch's task group: callers catch ModelError.
    with anyio.fail_after(30), pytest.raises(ModelRequestError, match="bad request"):
        async with watch_silence(
            notice_after=10, deadline=600, on_quiet=lambda s, d: None, endpoint="http://x"
        ):
            raise ModelRequestError("bad request")
