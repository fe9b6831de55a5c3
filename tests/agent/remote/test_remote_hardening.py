"""Issue 19 items 4, 5 and 6: bytes that once gave 500s, leaked slots or closed sockets.

- an ``initialize`` POST whose id is a lone surrogate, or whose JSON holds NaN, answered 500
  and kept its connection slot until the idle timeout (a few hundred locked everyone out);
- NaN over WebSocket closed the socket with 1011;
- a ``Last-Event-ID`` of thousands of digits, or with a Latin-1 digit, answered 500.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from acp_scripted_llm import ScriptedLLMServer
from iac_code.remote.options import RemoteLimits

from tests.agent.remote.remote_kit import INIT, agent_server, ws_client

pytestmark = pytest.mark.anyio

JSON = {"content-type": "application/json"}
INIT_JSON = json.dumps(INIT)
# Written by hand: json.dumps would not produce these (a lone "\ud800" escape, a bare NaN).
_HEAD = '{"jsonrpc":"2.0","method":"initialize","params":' + INIT_JSON
SURROGATE_ID = _HEAD + ',"id":"\\ud800"}'
NAN_PARAMS = _HEAD.replace('"protocolVersion": 1', '"protocolVersion": 1, "x": NaN') + ',"id":1}'
INFINITY_ID = _HEAD + ',"id":Infinity}'


async def test_bad_initialize_bodies_answer_400_and_free_their_slot(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    limits = RemoteLimits(max_connections=2)
    async with (
        agent_server(home, llm_server.url, limits=limits) as server,
        httpx.AsyncClient(timeout=60) as http,
    ):
        expected = {SURROGATE_ID: -32600, NAN_PARAMS: -32700, INFINITY_ID: -32700}
        for _ in range(3):  # more attempts than there are slots
            for body, code in expected.items():
                response = await http.post(server.url, content=body.encode(), headers=JSON)
                assert response.status_code == 400, (body, response.text)
                assert response.json()["error"]["code"] == code
                assert "acp-connection-id" not in response.headers
        assert len(server.registry) == 0
        good = await http.post(
            server.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
        )
        assert good.status_code == 200


async def test_a_lone_surrogate_id_on_a_later_post_is_refused(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    async with agent_server(home, llm_server.url) as server, httpx.AsyncClient() as http:
        first = await http.post(
            server.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
        )
        known = {**JSON, "acp-connection-id": first.headers["acp-connection-id"]}
        body = b'{"jsonrpc":"2.0","id":"\\udc00","method":"session/list","params":{}}'
        response = await http.post(server.url, content=body, headers=known)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32600
        nan = b'{"jsonrpc":"2.0","id":3,"method":"session/list","params":{"cursor":NaN}}'
        response = await http.post(server.url, content=nan, headers=known)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32700


async def test_a_nan_frame_over_websocket_is_answered_and_the_socket_stays(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    async with agent_server(home, llm_server.url) as server, ws_client(server.ws_url) as client:
        await client.transport.socket.send(NAN_PARAMS)  # before initialize
        assert (await client.response(None))["error"]["code"] == -32700
        await client.transport.socket.send(SURROGATE_ID)
        assert (await client.response(None))["error"]["code"] == -32600
        assert (await client.initialize())["protocolVersion"] == 1
        socket = client.transport.socket
        await socket.send('{"jsonrpc":"2.0","id":9,"method":"session/list","params":NaN}')
        assert (await client.response(None))["error"]["code"] == -32700
        # The connection goes on.
        session_id = await client.new_session(workspace)
        assert session_id


async def test_bad_last_event_ids_answer_400(home: Path, llm_server: ScriptedLLMServer) -> None:
    async with agent_server(home, llm_server.url) as server, httpx.AsyncClient() as http:
        first = await http.post(
            server.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
        )
        connection_id = first.headers["acp-connection-id"]
        for value in (b"9" * 5000, b"1\xb2", b"\xd9\xa1"):  # long; Latin-1 "²"; UTF-8 bytes
            response = await http.get(
                server.url,
                headers=[
                    (b"accept", b"text/event-stream"),
                    (b"acp-connection-id", connection_id.encode()),
                    (b"last-event-id", value),
                ],
            )
            assert response.status_code == 400, (value[:20], response.status_code)
            assert response.json()["error"]["code"] == -32600
