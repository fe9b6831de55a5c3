"""initialize and authenticate, in memory (SPEC §2, §8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from iac_code import __version__

from tests.agent.handlers.agent_harness import make_settings, open_agent

pytestmark = pytest.mark.anyio

EXPECTED_CAPABILITIES = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
    "mcpCapabilities": {"http": False, "sse": False},
    "sessionCapabilities": {
        "list": {},
        "close": {},
        "resume": {},
        "delete": {},
        "fork": {},
        "additionalDirectories": {},
    },
    "auth": {"logout": {}},
}


@pytest.mark.parametrize("asked", [1, 2, 65535, 0])
async def test_initialize_always_answers_protocol_version_one(tmp_path: Path, asked: int) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call("initialize", {"protocolVersion": asked})
    assert reply.result["protocolVersion"] == 1


async def test_a_version_beyond_uint16_is_invalid_params_as_the_acp_schema_says(
    tmp_path: Path,
) -> None:
    # ACP v1 defines protocolVersion as a uint16, so 99999 is not a version at all.
    async with open_agent(tmp_path) as client:
        reply = await client.call("initialize", {"protocolVersion": 99999})
    assert reply.error["code"] == -32602
    assert reply.error["data"] == {"protocolVersion": "must be at most 65535"}


async def test_initialize_advertises_exactly_the_implemented_capabilities(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        result = (await client.initialize()).result
    assert result["agentCapabilities"] == EXPECTED_CAPABILITIES
    assert result["agentInfo"] == {"name": "iac-code", "title": "iac-code", "version": __version__}
    assert [m["id"] for m in result["authMethods"]] == ["anthropic-api-key"]
    assert result["agentCapabilities"]["auth"] == {"logout": {}}  # logout is implemented


async def test_a_second_initialize_is_answered_identically(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        first = await client.initialize(clientCapabilities={"fs": {"readTextFile": True}})
        second = await client.initialize(clientCapabilities={"fs": {"readTextFile": True}})
    assert first.result == second.result


async def test_initialize_remembers_the_client_capabilities(tmp_path: Path) -> None:
    capabilities = {"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": True}
    async with open_agent(tmp_path) as client:
        await client.initialize(clientCapabilities=capabilities)
        assert client.agent.client_capabilities == capabilities


async def test_authenticate_with_the_advertised_method_and_a_key_succeeds(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call("authenticate", {"methodId": "anthropic-api-key"})
    assert reply.result == {}


async def test_authenticate_without_a_key_says_authentication_is_required(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path / "home", api_key=None)
    async with open_agent(tmp_path, settings=settings) as client:
        reply = await client.call("authenticate", {"methodId": "anthropic-api-key"})
    assert reply.error["code"] == -32000
    assert reply.error["data"] == {"authMethods": ["anthropic-api-key"]}


async def test_authenticate_with_an_unknown_method_is_invalid_params(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        reply = await client.call("authenticate", {"methodId": "oauth"})
    assert reply.error["code"] == -32602
    assert "methodId" in reply.error["data"]


async def test_the_handler_and_the_start_up_fast_path_send_the_same_bytes(tmp_path: Path) -> None:
    from iac_code.prelude import initialize_response_bytes
    from iac_code.rpc.framing import encode_message

    params = {"protocolVersion": 1, "clientCapabilities": {"terminal": True}}
    async with open_agent(tmp_path) as client:
        reply = await client.call("initialize", params)
    handler_frame = encode_message({"jsonrpc": "2.0", "id": 7, "result": reply.result})
    assert handler_frame == initialize_response_bytes(7, params)
