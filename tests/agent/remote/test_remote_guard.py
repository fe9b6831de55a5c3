"""Hardening beyond the SDK: token, Origin, protocol version, limits, idle close, start-up refusal,
WebSocket refusals and graceful shutdown on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from acp_scripted_llm import ScriptedLLMServer
from iac_code.remote.options import RemoteLimits, RemoteOptions
from iac_code.remote.serve import check_startup
from iac_code_dev.wire_client.sse_events import aiter_sse

from tests.agent.remote.llm_script import CHUNKS
from tests.agent.remote.remote_kit import (
    INIT,
    TIMEOUT,
    agent_server,
    announced_url,
    http_client,
    ws_client,
)

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
ROOT = Path(__file__).resolve().parents[3]


async def test_bearer_token_is_required_and_compared(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    async with agent_server(home, llm_server.url, token="s3cret") as server:
        async with httpx.AsyncClient() as http:
            missing = await http.post(server.url, json=INITIALIZE)
            assert missing.status_code == 401
            assert missing.headers["www-authenticate"] == "Bearer"
            assert missing.json()["error"]["code"] == -32000
            wrong = await http.post(
                server.url, json=INITIALIZE, headers={"authorization": "Bearer s3cres"}
            )
            assert wrong.status_code == 401
            right = await http.post(
                server.url, json=INITIALIZE, headers={"authorization": "Bearer s3cret"}
            )
            assert right.status_code == 200
            # The API description is public; the agent is not.
            assert (await http.get(server.url.replace("/acp", "/openapi.json"))).status_code == 200
        from websockets.exceptions import InvalidStatus

        with pytest.raises(InvalidStatus) as refused:
            async with ws_client(server.ws_url):
                pass
        assert refused.value.response.status_code == 401
        async with ws_client(server.ws_url, authorization="Bearer s3cret") as client:
            assert (await client.initialize())["protocolVersion"] == 1


async def test_origin_and_protocol_version(home: Path, llm_server: ScriptedLLMServer) -> None:
    allowed = ("https://ide.example.com",)
    async with (
        agent_server(home, llm_server.url, allowed_origins=allowed) as server,
        httpx.AsyncClient() as http,
    ):

        async def status(**headers: str) -> int:
            return (await http.post(server.url, json=INITIALIZE, headers=headers)).status_code

        assert await status(origin="https://evil.example") == 403
        assert await status(origin="null") == 403
        assert await status(origin="http://localhost:3000") == 200
        assert await status(origin="http://127.0.0.1:8765") == 200
        assert await status(origin="https://ide.example.com") == 200
        assert await status(**{"acp-protocol-version": "2"}) == 400
        assert await status(**{"acp-protocol-version": "1"}) == 200
        from websockets.exceptions import InvalidStatus

        with pytest.raises(InvalidStatus) as refused:
            async with ws_client(server.ws_url, origin="https://evil.example"):
                pass
        assert refused.value.response.status_code == 403


async def test_body_limit_and_connection_limit(home: Path, llm_server: ScriptedLLMServer) -> None:
    limits = RemoteLimits(max_body_bytes=2000, max_connections=1)
    async with (
        agent_server(home, llm_server.url, limits=limits) as server,
        httpx.AsyncClient() as http,
    ):
        first = await http.post(server.url, json=INITIALIZE)
        assert first.status_code == 200
        big = {**INITIALIZE, "params": {**INIT, "_meta": {"pad": "x" * 5000}}}
        assert (await http.post(server.url, json=big)).status_code == 413
        second = await http.post(server.url, json=INITIALIZE)
        assert second.status_code == 503 and second.headers["retry-after"]
        from websockets.exceptions import InvalidStatus

        with pytest.raises(InvalidStatus) as refused:
            async with ws_client(server.ws_url):
                pass
        assert refused.value.response.status_code == 503
        # Closing the first connection frees its place.
        connection = {"acp-connection-id": first.headers["acp-connection-id"]}
        assert (await http.delete(server.url, headers=connection)).status_code == 202
        with anyio.fail_after(TIMEOUT):
            await server.registry.wait_closed(connection["acp-connection-id"])
        assert (await http.post(server.url, json=INITIALIZE)).status_code == 200


async def test_idle_connection_is_closed(home: Path, llm_server: ScriptedLLMServer) -> None:
    limits = RemoteLimits(idle_timeout_seconds=0.2)
    async with (
        agent_server(home, llm_server.url, limits=limits) as server,
        httpx.AsyncClient() as http,
    ):
        connection_id = (await http.post(server.url, json=INITIALIZE)).headers["acp-connection-id"]
        with anyio.fail_after(TIMEOUT):
            await server.registry.wait_closed(connection_id)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}}
        response = await http.post(
            server.url, json=listing, headers={"acp-connection-id": connection_id}
        )
        assert response.status_code == 404


async def test_unread_output_is_bounded(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    """A client that never opens its session stream cannot make the server buffer forever."""
    limits = RemoteLimits(max_buffered_bytes=4000, output_stall_seconds=0.3)
    async with (
        agent_server(home, llm_server.url, limits=limits) as server,
        http_client(server.url, open_session_streams=False) as client,
    ):
        await client.initialize()
        result = await client.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        session_id = result["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": f"{CHUNKS}400"}]}
        message = {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": prompt}
        await client.send(message, session_id)
        assert client.transport.connection_id is not None
        with anyio.fail_after(TIMEOUT):
            await server.registry.wait_closed(client.transport.connection_id)


async def test_websocket_refusals_keep_the_socket_open(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async with agent_server(home, llm_server.url) as server:
        async with connect(server.ws_url) as socket:
            await socket.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/list"}))
            with pytest.raises(ConnectionClosed) as closed:
                with anyio.fail_after(TIMEOUT):
                    await socket.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1002
        async with connect(server.ws_url) as socket:
            with anyio.fail_after(TIMEOUT):
                await socket.send(json.dumps(INITIALIZE))
                assert "result" in json.loads(await socket.recv())
                await socket.send("[1, 2]")
                assert json.loads(await socket.recv())["error"]["code"] == -32600
                await socket.send("{oops")
                assert json.loads(await socket.recv())["error"]["code"] == -32700
                await socket.send(b"\x00binary")
                assert json.loads(await socket.recv())["error"]["code"] == -32600
                await socket.send(json.dumps({**INITIALIZE, "id": 5}))
                again = json.loads(await socket.recv())
                assert again["id"] == 5 and again["error"]["code"] == -32600
                listing = {"jsonrpc": "2.0", "id": 6, "method": "session/list", "params": {}}
                await socket.send(json.dumps(listing))
                answer = json.loads(await socket.recv())
                assert answer["id"] == 6 and "result" in answer


def test_non_loopback_host_needs_a_token() -> None:
    assert check_startup(RemoteOptions(host="0.0.0.0")) is not None
    assert check_startup(RemoteOptions(host="0.0.0.0", token="t")) is None
    assert check_startup(RemoteOptions(host="::1")) is None
    env = {k: v for k, v in os.environ.items() if k != "IACCODE_ACP_HTTP_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "acp", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 2
    assert "IACCODE_ACP_HTTP_TOKEN" in done.stderr


async def test_sigterm_ends_streams_cleanly_and_exits_zero(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    env = {
        **os.environ,
        "IAC_CODE_HOME": str(tmp_path / "home"),
        "ANTHROPIC_BASE_URL": llm_server.url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    command = [sys.executable, "-m", "iac_code.cli", "acp", "--transport", "http", "--port", "0"]
    async with await anyio.open_process(command, env=env, cwd=ROOT) as process:
        assert process.stderr is not None
        url = await announced_url(process.stderr)
        async with httpx.AsyncClient(timeout=httpx.Timeout(TIMEOUT, read=None)) as http:
            init = await http.post(url, json=INITIALIZE)
            headers = {
                "accept": "text/event-stream",
                "acp-connection-id": init.headers["acp-connection-id"],
            }
            with anyio.fail_after(TIMEOUT):
                async with http.stream("GET", url, headers=headers) as stream:
                    assert stream.status_code == 200
                    process.send_signal(signal.SIGTERM)
                    lines = stream.aiter_lines()
                    events = [event async for event in aiter_sse(lines)]  # ends, no error
        assert events == []
        with anyio.fail_after(TIMEOUT):
            assert await process.wait() == 0


async def test_host_header_is_checked_on_loopback(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    """DNS rebinding: a page on rebind.example resolved to 127.0.0.1 sends its own name as
    Host, with or without Origin; only loopback names and --allow-host names pass."""
    async with (
        agent_server(home, llm_server.url, allowed_hosts=("ide.internal",)) as server,
        httpx.AsyncClient() as http,
    ):

        async def status(host: str) -> int:
            response = await http.post(server.url, json=INITIALIZE, headers={"host": host})
            return response.status_code

        for refused in ("rebind.example", "rebind.example:8765", "localhost.evil", "[::1]x", ""):
            assert await status(refused) == 421, refused
        for accepted in ("localhost", "LOCALHOST:8765", "127.0.0.1", "127.0.0.1:1", "[::1]:80"):
            assert await status(accepted) == 200, accepted
        assert await status("ide.internal:9000") == 200
        refusal = await http.post(server.url, json=INITIALIZE, headers={"host": "evil"})
        assert "Host not allowed" in refusal.json()["error"]["message"]


def test_allow_host_flag_reaches_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    from iac_code.cli import build_parser, main

    args = build_parser().parse_args(
        ["acp", "--transport", "http", "--allow-host", "a.test", "--allow-host", "b.test"]
    )
    assert args.allow_host == ["a.test", "b.test"]
    with pytest.raises(SystemExit):
        main(["acp", "--help"])
    assert "--allow-host NAME" in capsys.readouterr().out
