"""Model endpoint faults as the client sees them (issue 8, item 15).

The real ``anthropic`` SDK talks to the scripted LLM server (or to a port nobody listens on):
an unreachable endpoint fails the prompt at once with a clear error and no message chunk;
429/5xx are retried and every retry is announced to the client as a session/update.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_schema.validation import validate_message
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.llm.anthropic_client import AnthropicModelClient, preload_sdk
from iac_code.llm.contract import ModelError, ModelRequest
from iac_code.llm.retry import RetryNotice, stream_with_retries

from tests.agent.turn_tools.agent_tools_kit import WireClient, in_memory_agent

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(
    model="claude-test", messages=[{"role": "user", "content": "hi"}], max_tokens=16
)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _retries_of(base_url: str) -> tuple[ModelError, list[RetryNotice]]:
    client = AnthropicModelClient("test-key", base_url)
    notices: list[RetryNotice] = []
    slept: list[float] = []

    async def no_sleep(seconds: float) -> None:
        slept.append(seconds)

    preload_sdk()  # the SDK's first import is slow on a busy machine: keep it out of the bound
    try:
        with anyio.fail_after(60):
            with pytest.raises(ModelError) as caught:
                async for _ in stream_with_retries(
                    client, REQUEST, on_retry=notices.append, sleep=no_sleep
                ):
                    pass
    finally:
        await client.aclose()
    assert len(slept) == len(notices)
    return caught.value, notices


async def test_connection_refused_is_not_retried_and_says_so() -> None:
    port = closed_port()
    error, notices = await _retries_of(f"http://127.0.0.1:{port}")
    assert notices == []
    assert error.retryable is False
    assert str(error) == (
        f"Could not connect to the model API at http://127.0.0.1:{port}: Connection refused;"
        " check the base URL (ANTHROPIC_BASE_URL, --base-url or base_url in config.toml) and"
        " that the endpoint is running there"
    )


async def test_an_unknown_host_is_not_retried() -> None:
    error, notices = await _retries_of("http://iac-code-test.invalid")
    assert notices == []
    assert "Could not connect to the model API at http://iac-code-test.invalid" in str(error)


def _chunks(client: WireClient, session: str, kind: str) -> list[dict[str, Any]]:
    return [u for u in client.updates(session) if u.get("sessionUpdate") == kind]


async def test_an_unreachable_endpoint_fails_the_prompt_without_message_chunks(
    workspace: Path, home: Path
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    async with in_memory_agent(home, llm_url=url) as run:
        session = await run.client.new_session(workspace)
        frame = await run.client.response(await run.client.start_prompt(session, "hello?"))
        error = frame["error"]
        assert error["code"] == -32603
        assert error["message"].startswith("The model request failed: Could not connect")
        assert "Connection refused" in error["message"]
        assert _chunks(run.client, session, "agent_message_chunk") == []
        assert _chunks(run.client, session, "notice") == []
        # The process stays usable.
        assert "sessions" in await run.client.request("session/list", {})


@pytest.mark.parametrize(
    ("capabilities", "kind"),
    [({"session": {"notices": {}}}, "notice"), ({}, "agent_thought_chunk")],
    ids=["notices-advertised", "no-notices-capability"],
)
async def test_each_retry_is_announced_to_the_client(
    workspace: Path, home: Path, capabilities: dict[str, Any], kind: str
) -> None:
    script = [
        Turn().http_error(529, "Overloaded"),
        Turn().http_error(429, "Slow down", retry_after=0),
        Turn().text("finally").stop("end_turn"),
    ]
    with ScriptedLLMServer(script) as llm:
        async with in_memory_agent(
            home, llm_url=llm.url, capabilities=capabilities, retry_base_delay=0.001
        ) as run:
            session = await run.client.new_session(workspace)
            result = await run.client.prompt(session, "hello")
            assert result["stopReason"] == "end_turn"
            announced = _chunks(run.client, session, kind)
            answer = "".join(
                u["content"]["text"] for u in _chunks(run.client, session, "agent_message_chunk")
            )
            # Reloading replays the conversation without the live retry notices.
            await run.client.request("session/close", {"sessionId": session})
            before_load = len(run.client.frames)
            await run.client.load_session(session, workspace)
            replayed = [
                f["params"]["update"]
                for f in run.client.frames[before_load:]
                if f.get("method") == "session/update"
            ]
    assert len(announced) == 2
    for update in announced:  # the wire shape the schema defines for this kind
        message = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session, "update": update},
        }
        assert validate_message(message, method="session/update") == []
    retries = [u["_meta"]["iac_code"]["retry"] for u in announced]
    assert [r["attempt"] for r in retries] == [1, 2]
    assert [r["statusCode"] for r in retries] == [529, 429]
    if kind == "notice":
        assert all(u["severity"] == "warning" and u["title"] for u in announced)
        assert "529" in announced[0]["description"]
    else:
        assert "retrying" in announced[0]["content"]["text"]
    assert answer == "finally"  # the notices never became part of the answer
    assert not any("retry" in str(u.get("_meta", "")) for u in replayed)
