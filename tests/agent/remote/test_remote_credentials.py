"""Issue 34 items 3 and 4 over Streamable HTTP: the server's agents use the same credential
lookup as stdio (the key saved by ``iac-code login`` works; a broken key is refused without
being shown). The real agent, the real ``anthropic`` SDK, the scripted model server."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.credentials import store_api_key
from iac_code.remote.serve import agent_handler_factory
from iac_code.settings import Settings

from tests.agent.remote.remote_kit import http_client, running_server

pytestmark = pytest.mark.anyio

SAVED_KEY = "sk-ant-saved-by-login"
CANARY_BODY = "CANARY-http-51c3e"


async def _one_prompt(
    home: Path, workspace: Path, llm_url: str, api_key: str | None
) -> tuple[list[object], dict[str, object]]:
    """One prompt over Streamable HTTP to a server built as ``iac-code acp --transport
    http`` builds it; every frame the client got, and the prompt's answer."""
    settings = Settings(home=home, api_key=api_key, base_url=llm_url, retry_base_delay=0)
    async with (
        running_server(agent_handler_factory(settings)) as server,
        http_client(server.url) as client,
    ):
        await client.initialize()
        session_id = await client.new_session(workspace)
        request_id = client.new_id()
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        message = {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": prompt}
        await client.send(message, session_id)
        answer: dict[str, object] = await client.response(request_id)
        return list(client.frames), answer


async def test_http_prompts_use_the_saved_key(home: Path, workspace: Path) -> None:
    store_api_key(home, SAVED_KEY)
    with ScriptedLLMServer(Turn().text("saved key works").to_dict()) as llm_server:
        _frames, answer = await _one_prompt(home, workspace, llm_server.url, None)
    assert answer.get("result", {}).get("stopReason") == "end_turn", answer  # type: ignore[union-attr]
    assert [r.api_key for r in llm_server.model_requests] == [SAVED_KEY]


async def test_http_a_broken_key_is_refused_and_never_shown(
    home: Path, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with ScriptedLLMServer(Turn().text("never").to_dict()) as llm_server:
        frames, answer = await _one_prompt(
            home, workspace, llm_server.url, f"sk-a{CANARY_BODY}\r\n"
        )
    error = answer["error"]
    assert isinstance(error, dict) and error["code"] == -32000
    assert "carriage return" in error["message"]
    assert llm_server.model_requests == []
    assert CANARY_BODY[:4] not in json.dumps(frames) + caplog.text
