"""Issue 19 item 11: unfinished POST bodies are not held forever, nor without a total cap.

Raw sockets on 127.0.0.1 (no token, loopback): a client that sends part of a body and stops
is answered 408 at the body deadline and its connection closed; bodies being received by
all connections together are capped, the request that would go past the cap is answered
503 with Retry-After, while a normal request still works.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
from acp_scripted_llm import ScriptedLLMServer
from anyio.abc import SocketStream
from iac_code.remote.options import RemoteLimits
from iac_code.remote.registry import ConnectionRegistry

from tests.agent.remote.remote_kit import INIT, TIMEOUT, agent_server

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}


async def _open_post(url: str, declared: int, first_part: bytes) -> SocketStream:
    """A POST to ``url`` declaring a ``declared``-byte body, of which only ``first_part``
    is sent."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    stream = await anyio.connect_tcp(parts.hostname, parts.port)
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: 127.0.0.1:{parts.port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    )
    await stream.send(head.encode() + first_part)
    return stream


async def _read_until_closed(stream: SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = bytearray()
    try:
        while True:
            received += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        return bytes(received)


async def _wait_receiving(registry: ConnectionRegistry, total: int) -> None:
    # The server reads the bytes when its event loop gets to them: nothing to wait on.
    while registry.receiving_body_bytes < total:  # noqa: ASYNC110
        await anyio.sleep(0.01)


async def test_a_body_that_stops_arriving_is_answered_408_at_the_deadline(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    limits = RemoteLimits(body_timeout_seconds=0.5)
    async with agent_server(home, llm_server.url, limits=limits) as server:
        stream = await _open_post(server.url, 8 * 2**20, b'{"jsonrpc":"2.0",' + b" " * 65536)
        async with stream:
            with anyio.fail_after(TIMEOUT):  # without a deadline no answer ever comes
                answer = await _read_until_closed(stream)
        status_line, _, rest = answer.partition(b"\r\n")
        assert status_line.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"did not arrive within 0.5 s" in rest
        assert server.registry.receiving_body_bytes == 0  # its buffer was let go
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            assert (await http.post(server.url, json=INITIALIZE)).status_code == 200


async def test_bodies_over_the_total_cap_are_refused_503_and_a_normal_request_still_works(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    cap = 4 * 2**20
    limits = RemoteLimits(max_buffered_body_bytes=cap, body_timeout_seconds=TIMEOUT * 4)
    part = b" " * 2**20
    async with agent_server(home, llm_server.url, limits=limits) as server:
        with anyio.fail_after(TIMEOUT):
            # Three unfinished 8 MiB bodies hold 3 MiB of the 4 MiB between them...
            slow = [await _open_post(server.url, 8 * 2**20 - 1, part) for _ in range(3)]
            await _wait_receiving(server.registry, 3 * 2**20)
            # ... a fourth that sends 1.5 MiB more would go past the cap: refused.
            extra = await _open_post(server.url, 8 * 2**20 - 1, part + part[: 2**19])
            async with extra:
                answer = await _read_until_closed(extra)
            assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
            assert b"retry-after: 1" in answer.lower()
            body = json.loads(answer.partition(b"\r\n\r\n")[2])
            assert "Too many request bodies" in body["error"]["message"]
            # A normal request still fits, and the unfinished bodies are still held.
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                assert (await http.post(server.url, json=INITIALIZE)).status_code == 200
            assert server.registry.receiving_body_bytes == 3 * 2**20
            for stream in slow:
                await stream.aclose()


async def test_slow_large_bodies_leave_room_for_small_requests(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    # Issue 34 item 11: slow uploads used to fill the whole cap, and then every initialize
    # got 503 until their deadline. Large bodies now stop short of the small-body reserve.
    cap, reserve = 4 * 2**20, 2**19
    limits = RemoteLimits(
        max_buffered_body_bytes=cap, small_body_reserve_bytes=reserve, body_timeout_seconds=60
    )
    part = b" " * 2**20
    async with agent_server(home, llm_server.url, limits=limits) as server:
        with anyio.fail_after(TIMEOUT):
            slow = [await _open_post(server.url, 8 * 2**20 - 1, part) for _ in range(3)]
            await _wait_receiving(server.registry, 3 * 2**20)
            # A fourth would fill the cap (and lock small requests out): it stops at the
            # reserve instead.
            fourth = await _open_post(server.url, 8 * 2**20 - 1, part)
            async with fourth:
                answer = await _read_until_closed(fourth)
            assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                for _ in range(3):  # small requests fit into the reserve, one after another
                    assert (await http.post(server.url, json=INITIALIZE)).status_code == 200
            assert server.registry.receiving_body_bytes == 3 * 2**20
            for stream in slow:
                await stream.aclose()


def test_the_flags_set_the_body_limits() -> None:
    from iac_code.cli import build_parser, remote_limits

    args = build_parser().parse_args(
        ["acp", "--transport", "http", "--body-timeout", "2.5", "--max-body-buffer-mib", "3"]
    )
    limits = remote_limits(args)
    assert limits.body_timeout_seconds == 2.5
    assert limits.max_buffered_body_bytes == 3 * 2**20
    defaults = remote_limits(build_parser().parse_args(["acp", "--transport", "http"]))
    assert defaults == RemoteLimits()
