"""ACP terminal authentication and logout, in memory: which methods ``initialize`` offers,
what ``authenticate`` and ``logout`` do, and which key the model client gets."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from acp_bindings.models import InitializeResponse
from iac_code.agent import info
from iac_code.agent.model_access import ModelAccess
from iac_code.credentials import credentials_path, store_api_key, stored_api_key
from iac_code.prelude import initialize_response_bytes
from iac_code.settings import load_settings

from tests.agent.handlers.agent_harness import make_settings, open_agent

pytestmark = pytest.mark.anyio

TERMINAL_CLIENT = {"auth": {"terminal": True}}


def _method_ids(result: dict[str, object]) -> list[object]:
    methods = result["authMethods"]
    assert isinstance(methods, list)
    return [m["id"] for m in methods]


async def test_terminal_login_offered_only_to_clients_that_can_run_it(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        plain = (await client.initialize()).result
        terminal = (await client.initialize(clientCapabilities=TERMINAL_CLIENT)).result
        declined = (
            await client.initialize(clientCapabilities={"auth": {"terminal": False}})
        ).result
    assert _method_ids(plain) == [info.API_KEY_AUTH_METHOD_ID]
    assert _method_ids(declined) == [info.API_KEY_AUTH_METHOD_ID]
    assert _method_ids(terminal) == [info.API_KEY_AUTH_METHOD_ID, info.TERMINAL_AUTH_METHOD_ID]
    method = terminal["authMethods"][1]
    assert method["type"] == "terminal" and method["args"] == ["--login"]
    assert terminal["agentCapabilities"]["auth"] == {"logout": {}}
    InitializeResponse.model_validate(terminal)  # the generated model accepts it


async def test_the_fast_path_answers_exactly_like_the_handler(tmp_path: Path) -> None:
    params = {"protocolVersion": 1, "clientCapabilities": TERMINAL_CLIENT}
    fast = json.loads(initialize_response_bytes(0, params))["result"]
    async with open_agent(tmp_path) as client:
        handled = (await client.call("initialize", params)).result
    assert json.dumps(fast) == json.dumps(handled)  # same keys, same order


async def test_authenticate_refuses_the_terminal_method(tmp_path: Path) -> None:
    async with open_agent(tmp_path) as client:
        await client.initialize(clientCapabilities=TERMINAL_CLIENT)
        reply = await client.call("authenticate", {"methodId": info.TERMINAL_AUTH_METHOD_ID})
        after = await client.call("session/list", {})
    assert reply.error["code"] == -32602
    assert "methodId" in reply.error["data"]
    assert after.result["sessions"] == []  # the agent stays up


async def test_authenticate_accepts_a_saved_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = make_settings(home, api_key=None)
    async with open_agent(tmp_path, settings=settings) as client:
        await client.initialize(clientCapabilities=TERMINAL_CLIENT)
        missing = await client.call("authenticate", {"methodId": info.API_KEY_AUTH_METHOD_ID})
        store_api_key(home, "saved-key")
        present = await client.call("authenticate", {"methodId": info.API_KEY_AUTH_METHOD_ID})
    assert missing.error["code"] == -32000
    assert missing.error["data"]["authMethods"] == [
        info.API_KEY_AUTH_METHOD_ID,
        info.TERMINAL_AUTH_METHOD_ID,
    ]
    assert present.result == {}


async def test_logout_removes_the_saved_key_and_is_idempotent(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store_api_key(home, "saved-key")
    async with open_agent(tmp_path, settings=make_settings(home)) as client:
        await client.initialize()
        first = await client.call("logout", {})
        second = await client.call("logout", {})
    assert first.result == {} and second.result == {}
    assert stored_api_key(home) is None


def test_saved_key_file_is_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = store_api_key(home, "k1")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    store_api_key(home, "k2")  # replaced atomically, still private
    assert stored_api_key(home) == "k2"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in home.iterdir()] == [credentials_path(home).name]


def test_the_environment_key_wins_over_the_saved_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store_api_key(home, "saved-key")
    with_env = load_settings({"IAC_CODE_HOME": str(home), "ANTHROPIC_API_KEY": "env-key"})
    without = load_settings({"IAC_CODE_HOME": str(home)})
    assert ModelAccess(with_env).api_key() == "env-key"
    assert ModelAccess(without).api_key() == "saved-key"
    credentials_path(home).write_text("not json", encoding="utf-8")
    assert ModelAccess(without).api_key() is None  # a damaged file is no key, not a crash
