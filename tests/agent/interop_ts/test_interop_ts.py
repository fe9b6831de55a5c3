"""Interop with the official TypeScript SDK 2.4.0, both directions.

- Its client (``createHttpStream`` / ``createWebSocketStream``) drives our server: initialize,
  two sessions, a prompt whose tool call asks for permission, through the real agent and the
  scripted model.
- Its server (``AcpServer`` on node:http) is driven by the test kit our own server's tests
  use, and answers the same transport probes with the same status codes as ours.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.remote.llm_script import WRITE, route
from tests.agent.remote.remote_kit import INIT, TIMEOUT, agent_server, http_client, ws_client

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def llm_server() -> ScriptedLLMServer:
    with ScriptedLLMServer(route) as server:
        yield server  # type: ignore[misc]


@pytest.mark.parametrize("mode", ["http", "ws"])
async def test_official_client_against_our_server(
    node: str, mode: str, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with agent_server(tmp_path / "home", llm_server.url) as server:
        command = [node, "client.mjs", mode, server.url, str(workspace), f"{WRITE}ts.txt"]
        with anyio.fail_after(60):
            done = await anyio.run_process(command, cwd=HERE, check=False)
    assert done.returncode == 0, done.stderr.decode()
    summary = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert summary["protocolVersion"] == 1 and summary["agent"] == "iac-code"
    assert summary["stopReason"] == "end_turn" and summary["secondStopReason"] == "end_turn"
    assert summary["distinctSessions"] and summary["permissionRequests"] == 1
    assert "tool_call" in summary["updates"] and "agent_message_chunk" in summary["updates"]
    assert (workspace / "ts.txt").read_text() == "hello\n"


@asynccontextmanager
async def official_server(node: str) -> AsyncIterator[str]:
    async with await anyio.open_process([node, "server.mjs"], cwd=HERE) as process:
        assert process.stdout is not None
        seen = b""
        with anyio.fail_after(TIMEOUT):
            while b"\n" not in seen:
                seen += await process.stdout.receive()
        url = seen.decode().split()[1]
        try:
            yield url
        finally:
            process.terminate()
            with anyio.move_on_after(5):
                await process.wait()


async def test_our_client_kit_against_the_official_server(node: str, tmp_path: Path) -> None:
    async with official_server(node) as url:
        async with http_client(url) as client:
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
            result = await client.request("session/prompt", prompt, stream=session_id)
            assert result["stopReason"] == "end_turn"
            assert client.agent_request_streams == [session_id]
            assert client.text_of(session_id) == "chose allow"
        async with ws_client(url.replace("http", "ws", 1)) as socket_client:
            await socket_client.initialize()
            session_id = await socket_client.new_session(tmp_path)
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
            result = await socket_client.request("session/prompt", prompt)
            assert result["stopReason"] == "end_turn"
            assert socket_client.text_of(session_id) == "chose allow"


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
LISTING = {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}}
PROMPT = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "session/prompt",
    "params": {"sessionId": "s", "prompt": []},
}


async def _probe_statuses(url: str) -> dict[str, int]:
    """The status code each transport rule produces on the server at ``url``."""
    sse = {"accept": "text/event-stream"}
    statuses: dict[str, int] = {}
    async with httpx.AsyncClient(timeout=httpx.Timeout(TIMEOUT, read=None)) as http:
        init = await http.post(url, json=INITIALIZE)
        statuses["initialize"] = init.status_code
        known = {"acp-connection-id": init.headers["acp-connection-id"]}
        statuses["no connection id"] = (await http.post(url, json=LISTING)).status_code
        unknown = {"acp-connection-id": "unknown"}
        statuses["unknown connection id"] = (
            await http.post(url, json=LISTING, headers=unknown)
        ).status_code
        plain = {**known, "content-type": "text/plain"}
        statuses["not json"] = (
            await http.post(url, content=json.dumps(LISTING), headers=plain)
        ).status_code
        statuses["batch"] = (await http.post(url, json=[LISTING], headers=known)).status_code
        statuses["initialize again"] = (
            await http.post(url, json=INITIALIZE, headers=known)
        ).status_code
        statuses["no session header"] = (
            await http.post(url, json=PROMPT, headers=known)
        ).status_code
        mismatched = {**known, "acp-session-id": "other"}
        statuses["mismatched session header"] = (
            await http.post(url, json=PROMPT, headers=mismatched)
        ).status_code
        statuses["accepted"] = (await http.post(url, json=LISTING, headers=known)).status_code
        statuses["get without accept"] = (await http.get(url, headers=known)).status_code
        statuses["get unknown"] = (await http.get(url, headers={**sse, **unknown})).status_code
        async with http.stream("GET", url, headers={**sse, **known}) as first:
            statuses["get"] = first.status_code
            statuses["second reader"] = (await http.get(url, headers={**sse, **known})).status_code
        statuses["put"] = (await http.put(url, json=LISTING)).status_code
        statuses["delete unknown"] = (await http.delete(url, headers=unknown)).status_code
        statuses["delete"] = (await http.delete(url, headers=known)).status_code
    return statuses


async def test_status_codes_match_the_official_server(
    node: str, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    async with official_server(node) as url:
        theirs = await _probe_statuses(url)
    async with agent_server(tmp_path / "home", llm_server.url) as server:
        ours = await _probe_statuses(server.url)
    assert ours == theirs
