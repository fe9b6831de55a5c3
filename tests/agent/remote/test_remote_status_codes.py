"""Every status-code and header rule of the HTTP profile, against a real server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.remote.remote_kit import INIT, agent_server, http_client

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
JSON = {"content-type": "application/json"}


async def _initialize(http: httpx.AsyncClient, url: str) -> str:
    response = await http.post(url, json=INITIALIZE)
    assert response.status_code == 200
    return response.headers["acp-connection-id"]


def _error_message(response: httpx.Response) -> str:
    body = response.json()
    assert body["jsonrpc"] == "2.0" and "id" in body
    return str(body["error"]["message"])


async def test_initialize_answers_200_with_a_connection_id(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    async with agent_server(home, llm_server.url) as server, httpx.AsyncClient() as http:
        response = await http.post(server.url, json=INITIALIZE)
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.headers["acp-connection-id"]
        body = response.json()
        assert body["id"] == 1 and body["result"]["protocolVersion"] == 1


async def test_post_rules(home: Path, llm_server: ScriptedLLMServer) -> None:
    async with agent_server(home, llm_server.url) as server, httpx.AsyncClient() as http:
        url = server.url
        connection_id = await _initialize(http, url)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}}

        missing = await http.post(url, json=listing)
        assert missing.status_code == 400 and "Missing Acp-Connection-Id" in _error_message(missing)

        unknown = await http.post(url, json=listing, headers={"acp-connection-id": "nope"})
        assert unknown.status_code == 404

        known = {"acp-connection-id": connection_id}
        accepted = await http.post(url, json=listing, headers=known)
        assert accepted.status_code == 202 and accepted.content == b""

        again = await http.post(url, json=INITIALIZE, headers=known)
        assert again.status_code == 400

        wrong_type = await http.post(
            url, content=json.dumps(listing), headers={**known, "content-type": "text/plain"}
        )
        assert wrong_type.status_code == 415

        not_json = await http.post(url, content=b"{nope", headers={**known, **JSON})
        assert not_json.status_code == 400 and not_json.json()["error"]["code"] == -32700

        batch = await http.post(url, json=[listing], headers=known)
        assert batch.status_code == 400 and batch.json()["error"]["code"] == -32600

        scalar = await http.post(url, json=42, headers=known)
        assert scalar.status_code == 400 and scalar.json()["error"]["code"] == -32600

        no_id_initialize = {k: v for k, v in INITIALIZE.items() if k != "id"}
        notification = await http.post(url, json=no_id_initialize)
        assert notification.status_code == 400

        put = await http.put(url, json=listing)
        assert put.status_code == 405 and "POST" in put.headers["allow"]


async def test_a_refused_request_is_answered_under_its_own_id(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    # JSON-RPC: an error answer carries the request's id whenever it could be read; the
    # checker's jsonrpc.one-response-per-request caught refusals that answered with null.
    async with agent_server(home, llm_server.url) as server, httpx.AsyncClient() as http:
        url = server.url
        connection_id = await _initialize(http, url)
        known = {"acp-connection-id": connection_id}
        prompt = {
            "jsonrpc": "2.0",
            "id": "p-7",
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": []},
        }

        no_session_header = await http.post(url, json=prompt, headers=known)
        assert no_session_header.status_code == 400
        assert no_session_header.json()["id"] == "p-7"

        listing = {"jsonrpc": "2.0", "id": 9, "method": "session/list", "params": {}}
        unknown = await http.post(url, json=listing, headers={"acp-connection-id": "nope"})
        assert unknown.status_code == 404 and unknown.json()["id"] == 9
        missing = await http.post(url, json=listing)
        assert missing.status_code == 400 and missing.json()["id"] == 9

        # A notification or an unreadable id has nothing to echo.
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}
        refused_notification = await http.post(url, json=cancel)
        assert refused_notification.status_code == 400
        assert refused_notification.json()["id"] is None
        bool_id = {**listing, "id": True}
        refused_bool = await http.post(url, json=bool_id)
        assert refused_bool.status_code == 400 and refused_bool.json()["id"] is None


async def test_session_header_rules(home: Path, llm_server: ScriptedLLMServer) -> None:
    async with agent_server(home, llm_server.url) as server, httpx.AsyncClient() as http:
        known = {"acp-connection-id": await _initialize(http, server.url)}
        prompt = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": []},
        }
        missing = await http.post(server.url, json=prompt, headers=known)
        assert missing.status_code == 400 and "Acp-Session-Id" in _error_message(missing)

        other = {**known, "acp-session-id": "s2"}
        mismatched = await http.post(server.url, json=prompt, headers=other)
        assert mismatched.status_code == 400 and "match" in _error_message(mismatched)

        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}
        assert (await http.post(server.url, json=cancel, headers=known)).status_code == 400

        too_long = {**known, "acp-session-id": "x" * 5000}
        assert (await http.post(server.url, json=prompt, headers=too_long)).status_code == 400


async def test_get_rules(home: Path, llm_server: ScriptedLLMServer) -> None:
    async with agent_server(home, llm_server.url) as server, httpx.AsyncClient() as http:
        url = server.url
        connection_id = await _initialize(http, url)
        sse = {"accept": "text/event-stream"}

        assert (
            await http.get(url, headers={"acp-connection-id": connection_id})
        ).status_code == 406
        assert (await http.get(url, headers=sse)).status_code == 400
        assert (await http.get(url, headers={**sse, "acp-connection-id": "x"})).status_code == 404
        bad_resume = {**sse, "acp-connection-id": connection_id, "last-event-id": "abc"}
        assert (await http.get(url, headers=bad_resume)).status_code == 400

        for session in (None, "s1"):
            headers = {**sse, "acp-connection-id": connection_id}
            if session:
                headers["acp-session-id"] = session
            async with http.stream("GET", url, headers=headers) as first:
                assert first.status_code == 200
                assert first.headers["content-type"].startswith("text/event-stream")
                second = await http.get(url, headers=headers)
                assert second.status_code == 409


async def test_delete_ends_the_connection(home: Path, llm_server: ScriptedLLMServer) -> None:
    async with agent_server(home, llm_server.url) as server, http_client(server.url) as client:
        await client.initialize()
        assert client.transport.http is not None
        connection_id = client.transport.connection_id
        assert connection_id is not None
        assert (await client.transport.http.delete(server.url)).status_code == 400
        unknown = await client.transport.http.delete(server.url, headers={"acp-connection-id": "x"})
        assert unknown.status_code == 404
        assert (await client.transport.delete()).status_code == 202
        # Its stream ends cleanly and the id is gone for every method.
        await client.wait_for(lambda: None not in client.transport.stream_scopes)
        listing = {"jsonrpc": "2.0", "id": 9, "method": "session/list", "params": {}}
        assert (await client.transport.post(listing)).status_code == 404
        assert (await client.transport.delete()).status_code == 404


async def test_openapi_document_is_served_and_generated_from_schema(
    home: Path, llm_server: ScriptedLLMServer
) -> None:
    from acp_schema.openapi import build_document

    async with agent_server(home, llm_server.url) as server, httpx.AsyncClient() as http:
        response = await http.get(server.url.replace("/acp", "/openapi.json"))
    assert response.status_code == 200
    document = response.json()
    assert document == build_document()  # the checked-in copy is current
    assert document["openapi"].startswith("3.1")
    operations = document["paths"]["/acp"]
    assert set(operations) == {"post", "get", "delete"}
    schemas = document["components"]["schemas"]
    prompt_call = schemas["SessionPromptCall"]["properties"]["params"]
    assert prompt_call == {"$ref": "#/components/schemas/PromptRequest"}
    assert "PromptRequest" in schemas and "ContentBlock" in schemas
    assert {"200", "202", "400", "404", "415"} <= set(operations["post"]["responses"])
    assert {"406", "409", "410"} <= set(operations["get"]["responses"])
