"""End to end: a real ``iac-code acp`` process exports to a real OTLP/HTTP receiver.

The receiver (:mod:`acp_conformance.trace_receiver`, the checker's) listens on 127.0.0.1 and decodes
with ``opentelemetry-proto``. The agent is started as a subprocess with the standard
``OTEL_*`` variables only, the model is the real ``anthropic`` SDK against the scripted
LLM server, and the process's own shutdown flushes what it recorded, so once it has exited
the receiver holds everything: no waiting on export intervals.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from acp_conformance.trace_receiver import OtlpReceiver, ReceivedSpan, running_receiver
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code_dev.wire_client import agent_command, open_agent_process

from tests.agent.remote.remote_kit import announced_url, http_client
from tests.agent.telemetry.telemetry_kit import (
    CALLER_SPAN_ID,
    CALLER_TRACE_ID,
    CALLER_TRACEPARENT,
    METRIC_NAMES,
)
from tests.agent.turn_tools.agent_tools_kit import (
    DEFAULT_HANDLERS,
    WAIT_S,
    agent_environment,
    never_answer,
)

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

SECRET = "PROMPT-TEXT-THAT-MUST-NOT-LEAK"
#: A first prompt loads the model SDK in the agent process: slow on a busy machine.
PROMPT_WAIT_S = 60.0


@pytest.fixture
def otlp() -> Iterator[OtlpReceiver]:
    with running_receiver() as receiver:
        yield receiver


def otel_environment(home: Path, llm_url: str, receiver: OtlpReceiver) -> dict[str, str]:
    env = {k: v for k, v in agent_environment(home, llm_url).items() if not k.startswith("OTEL_")}
    env.update(
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
        OTEL_SERVICE_NAME="iac-code-e2e",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment.name=test",
        IAC_CODE_LOG_LEVEL="INFO",
    )
    return env


def homes(tmp_path: Path) -> tuple[Path, Path]:
    """The agent's home and an existing workspace."""
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    return home, workspace


def script_a_write(llm: ScriptedLLMServer) -> None:
    """The model writes a.txt (tool call w1, asking permission), then answers."""
    llm.script.add(
        Turn().tool_use("write_file", {"path": "a.txt", "content": "x = 1\n"}, id="w1"),
        Turn().text("Written."),
    )


def by_name(spans: list[ReceivedSpan], prefix: str) -> list[ReceivedSpan]:
    return [span for span in spans if span.name.startswith(prefix)]


def prompt(session: str, text: str, **meta: str) -> dict[str, object]:
    params: dict[str, object] = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    if meta:
        params["_meta"] = meta
    return params


def assert_tool_turn_tree(spans: list[ReceivedSpan]) -> ReceivedSpan:
    """One turn of the caller's trace: chat, execute_tool (with its permission wait and the
    permission request), chat; returns the turn's span."""
    turns = [s for s in by_name(spans, "invoke_agent") if s.trace_id == CALLER_TRACE_ID]
    assert len(turns) == 1, [s.name for s in spans]
    turn = turns[0]
    assert turn.parent_span_id == CALLER_SPAN_ID
    assert turn.attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
    in_turn = [s for s in spans if s.trace_id == CALLER_TRACE_ID]
    chats = by_name(in_turn, "chat ")
    assert len(chats) == 2 and all(c.parent_span_id == turn.span_id for c in chats)
    assert all(c.attributes["gen_ai.usage.output_tokens"] > 0 for c in chats)
    (tool,) = by_name(in_turn, "execute_tool")
    assert tool.parent_span_id == turn.span_id
    assert tool.attributes["gen_ai.tool.name"] == "write_file"
    assert tool.attributes["gen_ai.tool.call.id"] == "w1"
    (wait,) = by_name(in_turn, "permission_wait")
    assert wait.parent_span_id == tool.span_id
    (asked,) = by_name(in_turn, "session/request_permission")
    assert asked.parent_span_id == wait.span_id
    return turn


async def test_stdio_turns_reach_the_otlp_receiver(
    tmp_path: Path, llm: ScriptedLLMServer, otlp: OtlpReceiver
) -> None:
    home, workspace = homes(tmp_path)
    script_a_write(llm)
    llm.script.add(Turn().tool_use("write_file", {"path": "b.txt", "content": "y\n"}, id="w2"))
    stderr = tmp_path / "stderr.log"
    env = otel_environment(home, llm.url, otlp)
    async with open_agent_process(
        agent_command("--log-format", "json"),
        env=env,
        stderr_path=stderr,
        handlers=dict(DEFAULT_HANDLERS),
        wait_s=PROMPT_WAIT_S,
    ) as running:
        client = running.client
        await client.initialize()
        session = await client.new_session(workspace)
        result = await client.request(
            "session/prompt",
            prompt(session, SECRET, traceparent=CALLER_TRACEPARENT),
            stream=session,
        )
        assert result["stopReason"] == "end_turn"
        permission = client.requests_for("session/request_permission")[0]
        assert permission["params"]["_meta"]["traceparent"].split("-")[1] == CALLER_TRACE_ID
        # A second turn, cancelled while its permission request is open.
        client.handlers["session/request_permission"] = never_answer
        prompt_id = await client.start_prompt(session, "write b")
        await client.wait_for(
            lambda: len(client.requests_for("session/request_permission")) == 2, PROMPT_WAIT_S
        )
        await client.notify("session/cancel", {"sessionId": session})
        answer = await client.response(prompt_id, PROMPT_WAIT_S)
        assert answer["result"]["stopReason"] == "cancelled"
        await running.close_stdin()
        assert await running.wait_exit(WAIT_S) == 0

    spans = otlp.spans()
    turn = assert_tool_turn_tree(spans)
    assert turn.resource["service.name"] == "iac-code-e2e"
    assert turn.resource["deployment.environment.name"] == "test"
    assert turn.attributes["gen_ai.conversation.id"] == session
    (cancelled,) = [s for s in by_name(spans, "invoke_agent") if s.trace_id != CALLER_TRACE_ID]
    assert cancelled.attributes["gen_ai.response.finish_reasons"] == ("cancelled",)
    assert cancelled.parent_span_id == ""
    assert SECRET.encode() not in otlp.exported_bytes()
    assert otlp.metric_names() >= METRIC_NAMES
    # --log-format json: every stderr line is an object; those logged in a turn carry its ids.
    logged = [json.loads(line) for line in stderr.read_text().splitlines() if line.strip()]
    assert all(isinstance(entry, dict) and "message" in entry for entry in logged)
    assert any(entry.get("trace_id") == CALLER_TRACE_ID for entry in logged)


V2_INITIALIZE = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}}


async def test_a_v2_prompt_continues_the_callers_trace(
    tmp_path: Path, llm: ScriptedLLMServer, otlp: OtlpReceiver
) -> None:
    home, workspace = homes(tmp_path)
    llm.script.add(Turn().text("Hello from v2."))
    async with open_agent_process(
        env=otel_environment(home, llm.url, otlp), wait_s=PROMPT_WAIT_S
    ) as running:
        client = running.client
        assert (await client.request("initialize", V2_INITIALIZE))["protocolVersion"] == 2
        session = (await client.request("session/new", {"cwd": str(workspace)}))["sessionId"]
        accepted = await client.request(
            "session/prompt", prompt(session, "hello", traceparent=CALLER_TRACEPARENT)
        )
        assert "messageId" in accepted
        # v2 answers at once and runs the turn after; "idle" ends it.
        await client.wait_for(
            lambda: any(
                update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"
                for update in client.updates(session)
            )
        )
        await running.close_stdin()
        assert await running.wait_exit(WAIT_S) == 0
    (turn,) = by_name(otlp.spans(), "invoke_agent")
    assert (turn.trace_id, turn.parent_span_id) == (CALLER_TRACE_ID, CALLER_SPAN_ID)
    assert turn.attributes["gen_ai.response.finish_reasons"] == ("end_turn",)


@asynccontextmanager
async def http_agent(env: dict[str, str]) -> AsyncIterator[str]:
    """``iac-code acp --transport http`` on an ephemeral port; yields its ``/acp`` URL and
    stops it with SIGTERM (which flushes its telemetry) at the end of the block."""
    command = [sys.executable, "-m", "iac_code.cli", "acp", "--transport", "http", "--port", "0"]
    async with await anyio.open_process(command, env=env) as process:
        assert process.stderr is not None
        yield await announced_url(process.stderr)
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(WAIT_S):
            assert await process.wait() == 0


async def test_http_transport_exports_and_serves_metrics(
    tmp_path: Path, llm: ScriptedLLMServer, otlp: OtlpReceiver
) -> None:
    home, workspace = homes(tmp_path)
    script_a_write(llm)
    env = otel_environment(home, llm.url, otlp) | {
        "OTEL_METRICS_EXPORTER": "otlp,prometheus",
        "IACCODE_ACP_HTTP_TOKEN": "s3cret",
    }
    async with http_agent(env) as url:
        async with http_client(url, authorization="Bearer s3cret") as client:
            await client.initialize()
            session = await client.new_session(workspace)
            result = await client.request(
                "session/prompt",
                prompt(session, SECRET, traceparent=CALLER_TRACEPARENT),
                stream=session,
                wait_s=PROMPT_WAIT_S,
            )
            assert result["stopReason"] == "end_turn"
        metrics_url = url.removesuffix("/acp") + "/metrics"
        async with httpx.AsyncClient(timeout=WAIT_S) as http:
            refused = await http.get(metrics_url)
            page = await http.get(metrics_url, headers={"authorization": "Bearer s3cret"})
        assert refused.status_code == 401
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/plain; version=0.0.4")
        assert 'iac_code_turns_total{iac_code_stop_reason="end_turn"} 1' in page.text
        assert "gen_ai_client_token_usage_bucket" in page.text
        assert "iac_code_connections_open" in page.text

    assert_tool_turn_tree(otlp.spans())
    assert SECRET.encode() not in otlp.exported_bytes()
    assert otlp.metric_names() >= METRIC_NAMES


async def test_metrics_page_is_404_when_not_configured(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(IAC_CODE_HOME=str(tmp_path / "home"), ANTHROPIC_API_KEY="test-key")
    async with http_agent(env) as url, httpx.AsyncClient(timeout=WAIT_S) as http:
        page = await http.get(url.removesuffix("/acp") + "/metrics")
    assert page.status_code == 404
    assert "OTEL_METRICS_EXPORTER=prometheus" in page.text
