"""v2 ``auth/logout`` as the official test kit judges it (ACP-AUTH-203): an agent that advertises
auth methods serves it. Like v1 ``logout``, it forgets the key the terminal login saved."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_schema.validation import validate_result
from iac_code.credentials import credentials_path, store_api_key

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
