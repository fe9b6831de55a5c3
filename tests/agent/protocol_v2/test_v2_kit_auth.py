"""v2 authentication as the official test kit judges it: an agent that advertises auth methods
serves ``auth/logout`` (ACP-AUTH-203; like v1 ``logout``, it forgets the key the terminal login
saved), and the terminal login is offered only to a client that declared terminal auth, in a
well-formed shape (ACP-AUTH-202, ACP-AUTH-207)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp_schema.validation import validate_result
from iac_code.credentials import credentials_path, store_api_key
from iac_code.prelude import initialize_response_bytes

from tests.agent.protocol_v2.versioned_agent import open_versioned_agent

pytestmark = pytest.mark.anyio

V2_INIT = {"protocolVersion": 2, "info": {"name": "v2-kit-client", "version": "0.1"}}


async def test_logout_is_served_on_v2_and_forgets_the_saved_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store_api_key(home, "sk-ant-saved-by-the-terminal-login")
    async with open_versioned_agent(tmp_path) as client:
        initialized = (await client.call("initialize", V2_INIT)).result
        assert initialized["protocolVersion"] == 2 and initialized["authMethods"]
        answer = await client.call("auth/logout", {})
        assert answer.result == {}
        assert validate_result("auth/logout", answer.result, version=2) == []
        # Logged out is not gone: the agent still answers.
        assert (await client.call("session/list", {})).result["sessions"] == []
    assert not credentials_path(home).exists()


async def test_logout_without_a_saved_key_still_succeeds(tmp_path: Path) -> None:
    async with open_versioned_agent(tmp_path) as client:
        await client.call("initialize", V2_INIT)
        assert (await client.call("auth/logout", {"_meta": None})).result == {}


TERMINAL_CLIENT = {**V2_INIT, "capabilities": {"auth": {"terminal": {}}}}


@pytest.mark.parametrize("params", [V2_INIT, TERMINAL_CLIENT], ids=["no terminal", "terminal"])
async def test_the_terminal_login_is_offered_only_to_a_client_that_runs_it(
    tmp_path: Path, params: dict[str, Any]
) -> None:
    # ACP-AUTH-202 and ACP-AUTH-207: offered only on request, with string args and no env.
    async with open_versioned_agent(tmp_path) as client:
        result = (await client.call("initialize", params)).result
    assert validate_result("initialize", result, version=2) == []
    terminal = [m for m in result["authMethods"] if m["type"] == "terminal"]
    if params is V2_INIT:
        assert terminal == []
    else:
        assert [(m["methodId"], m["args"]) for m in terminal] == [("terminal-login", ["--login"])]
    # The start-up fast path answers the same thing, byte for byte.
    fast = json.loads(initialize_response_bytes(3, params))["result"]
    assert json.dumps(fast) == json.dumps(result)


async def test_login_refuses_the_terminal_method(tmp_path: Path) -> None:
    async with open_versioned_agent(tmp_path) as client:
        await client.call("initialize", TERMINAL_CLIENT)
        refused = await client.call("auth/login", {"methodId": "terminal-login"})
    assert refused.error["code"] == -32602
