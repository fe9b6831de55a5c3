"""HTTP/2 (prior knowledge, cleartext): POSTs and the SSE streams multiplexed on one TCP
connection, as the transport RFD expects of HTTP clients."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from acp_scripted_llm import ScriptedLLMServer
from iac_code_dev.wire_client.remote_transports import open_http_client

from tests.agent.remote.remote_kit import CAPABILITIES, TIMEOUT, agent_server

pytestmark = pytest.mark.anyio


async def test_session_over_http2(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    timeout = httpx.Timeout(TIMEOUT, read=None)
    async with (
        agent_server(home, llm_server.url) as server,
        httpx.AsyncClient(http1=False, http2=True, timeout=timeout) as http,
        open_http_client(server.url, http=http, capabilities=CAPABILITIES) as client,
    ):
        await client.initialize()
        session_id = await client.new_session(workspace)
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "over h2"}]}
        result = await client.request("session/prompt", prompt, stream=session_id)
        assert result["stopReason"] == "end_turn"
        assert "over h2" in client.text_of(session_id)
        response = await http.get(server.url.replace("/acp", "/openapi.json"))
        assert response.http_version == "HTTP/2"
