"""Model endpoint problems are fast and clear (issue 32, item 4).

The real ``anthropic`` SDK against the scripted LLM server on 127.0.0.1 (or a port nobody
listens on): a 404 from a base URL ending in ``/v1`` names the URL and says to drop the
suffix; a server that sends nothing gets a visible notice, then the prompt ends with a clear
JSON-RPC error at the configured deadline; every failed prompt is one WARNING log line
without the key; without a key, v1 and v2 prompts give the same message naming both ways to
log in.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.llm.contract import NO_API_KEY_MESSAGE

from tests.agent.turn_tools.agent_tools_kit import WireClient, in_memory_agent
from tests.agent.turn_tools.test_agent_model_retries import closed_port

pytestmark = pytest.mark.anyio

#: A key that must never appear in a log line or a message.
SECRET_KEY = "sk-test-never-logged-9c1f"


def _updates(client: WireClient, session: str, kind: str) -> list[dict[str, Any]]:
    return [u for u in client.updates(session) if u.get("sessionUpdate") == kind]


def _failure_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "iac_code.agent.turn" and record.levelno == logging.WARNING
    ]


async def test_a_404_from_a_v1_suffix_names_the_url_and_says_to_drop_it(
    workspace: Path, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with ScriptedLLMServer([Turn().text("never sent")]) as llm:
        url = llm.url
        base_url = url + "/v1"
        async with in_memory_agent(home, llm_url=base_url, api_key=SECRET_KEY) as run:
            session = await run.client.new_session(workspace)
            frame = await run.client.response(await run.client.start_prompt(session, "hi"))
            retries = _updates(run.client, session, "agent_thought_chunk")
        requests = [request.path for request in llm.requests]
    error = frame["error"]
    assert error["code"] == -32603
    assert f"answered 404 for {url}/v1/v1/messages" in error["message"]
    assert "drop the /v1 suffix" in error["message"]
    assert retries == []  # a 404 is not retried: another try would get the same answer
    assert requests == ["/v1/v1/messages"]
    failures = _failure_lines(caplog)
    assert len(failures) == 1 and "drop the /v1 suffix" in failures[0]
    assert SECRET_KEY not in caplog.text


async def test_a_refused_port_fails_at_once_and_is_logged(
    workspace: Path, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    async with in_memory_agent(home, llm_url=url, api_key=SECRET_KEY) as run:
        session = await run.client.new_session(workspace)
        frame = await run.client.response(await run.client.start_prompt(session, "hi"))
        retries = _updates(run.client, session, "agent_thought_chunk")
    assert retries == []
    assert url in frame["error"]["message"]
    assert "check the base URL" in frame["error"]["message"]
    failures = _failure_lines(caplog)
    assert len(failures) == 1
    assert url in failures[0] and "Connection refused" in failures[0]
    assert "\n" not in failures[0]
    assert SECRET_KEY not in caplog.text


@pytest.mark.parametrize(
    ("capabilities", "kind"),
    [({"session": {"notices": {}}}, "notice"), ({}, "agent_thought_chunk")],
    ids=["notices-advertised", "no-notices-capability"],
)
async def test_a_silent_model_gets_a_notice_then_the_prompt_ends_at_the_deadline(
    workspace: Path,
    home: Path,
    capabilities: dict[str, Any],
    kind: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The server accepts the request and sends nothing for far longer than the deadline.
    with ScriptedLLMServer([Turn().text("too late").timing(latency=600.0)]) as llm:
        url = llm.url
        async with in_memory_agent(
            home,
            llm_url=url,
            capabilities=capabilities,
            model_notice_after=0.3,
            model_timeout=1.5,
        ) as run:
            session = await run.client.new_session(workspace)
            frame = await run.client.response(await run.client.start_prompt(session, "hi"))
            noticed = _updates(run.client, session, kind)
            answer = _updates(run.client, session, "agent_message_chunk")
            assert "sessions" in await run.client.request("session/list", {})  # still serving
    error = frame["error"]
    assert error["code"] == -32603
    assert error["message"] == (
        f"The model request failed: The model API at {url} sent nothing for 1.5 s;"
        " check that the endpoint is up and not overloaded (the limit is model_timeout in"
        " config.toml, or --model-timeout)."
    )
    assert len(noticed) == 1, noticed
    quiet = noticed[0]["_meta"]["iac_code"]["quiet"]
    assert quiet["deadlineSeconds"] == 1.5
    text = noticed[0]["description"] if kind == "notice" else noticed[0]["content"]["text"]
    assert text.startswith("The model has sent nothing for ")
    assert "after 1.5 s of silence" in text
    assert answer == []
    assert any("sent nothing for 1.5 s" in line for line in _failure_lines(caplog))


async def test_a_model_that_streams_slowly_is_never_cut_off(workspace: Path, home: Path) -> None:
    # Each chunk comes before the silence deadline: the answer is complete, however long.
    turn = Turn().text("slow but steady", chunks=5).timing(chunk_delay=0.2)
    with ScriptedLLMServer([turn]) as llm:
        async with in_memory_agent(
            home, llm_url=llm.url, model_notice_after=30.0, model_timeout=30.0
        ) as run:
            session = await run.client.new_session(workspace)
            result = await run.client.prompt(session, "hi")
            answer = "".join(
                u["content"]["text"] for u in _updates(run.client, session, "agent_message_chunk")
            )
    assert result["stopReason"] == "end_turn"
    assert answer == "slow but steady"


async def test_without_a_key_the_v1_prompt_names_both_ways_to_log_in(
    workspace: Path, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with in_memory_agent(home, api_key=None) as run:
        session = await run.client.new_session(workspace)
        frame = await run.client.response(await run.client.start_prompt(session, "hi"))
    assert frame["error"]["code"] == -32000
    assert frame["error"]["message"] == NO_API_KEY_MESSAGE
    assert "ANTHROPIC_API_KEY" in NO_API_KEY_MESSAGE and "iac-code login" in NO_API_KEY_MESSAGE
    assert len(_failure_lines(caplog)) == 1


def test_the_readme_quotes_the_no_key_message() -> None:
    readme = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
    assert NO_API_KEY_MESSAGE in readme


async def test_without_a_key_v2_prompts_and_authenticate_say_the_same(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.agent.handlers.agent_harness import make_settings, open_agent

    v2_init = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}}
    settings = make_settings(tmp_path / "home", api_key=None)
    async with open_agent(tmp_path, [], settings=settings, versioned=True) as client:
        assert (await client.call("initialize", v2_init)).result["protocolVersion"] == 2
        created = await client.call("session/new", {"cwd": str(client.workspace)})
        session_id = created.result["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        refused = await client.call("session/prompt", prompt)
    assert refused.error["code"] == -32000
    assert refused.error["message"] == NO_API_KEY_MESSAGE
    logged = [r.getMessage() for r in caplog.records if r.name == "iac_code.v2.handlers"]
    assert logged == [f"prompt in session {session_id} failed: no API key"]
    async with open_agent(tmp_path, [], settings=settings) as client:
        await client.initialize()
        answer = await client.call("authenticate", {"methodId": "anthropic-api-key"})
    assert answer.error["message"] == NO_API_KEY_MESSAGE


async def test_a_v2_prompt_uses_the_key_saved_by_iac_code_login(tmp_path: Path) -> None:
    from iac_code.credentials import store_api_key

    from tests.agent.handlers.agent_harness import make_settings, open_agent

    v2_init = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}}
    settings = make_settings(tmp_path / "home", api_key=None)
    store_api_key(settings.home, "sk-saved-by-login")
    async with open_agent(tmp_path, [Turn().text("ok")], settings=settings, versioned=True) as c:
        assert (await c.call("initialize", v2_init)).result["protocolVersion"] == 2
        session_id = (await c.call("session/new", {"cwd": str(c.workspace)})).result["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        accepted = await c.call("session/prompt", prompt)
    assert "messageId" in accepted.result  # before the fix, v2 read only the environment's key
