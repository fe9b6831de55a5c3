"""Whole sessions over the remote transport: the real agent, the real ``anthropic`` SDK against
the scripted model server, real sockets, over Streamable HTTP and over WebSocket."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer
from iac_code_dev.wire_client import WireClient

from tests.agent.remote.llm_script import BASH, CHUNKS, SLOW, WRITE, chunk_text
from tests.agent.remote.remote_kit import agent_server, http_client, ws_client
from tests.agent.turn_tools.agent_tools_kit import install_stand_in_terraform

pytestmark = pytest.mark.anyio


def _prompt(session_id: str, text: str) -> dict[str, object]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def _prompt_call(client: WireClient, session_id: str, text: str) -> object:
    return await client.request("session/prompt", _prompt(session_id, text), stream=session_id)


# ---------------------------------------------------------------------- Streamable HTTP


async def test_http_prompt_with_tool_call_and_permission(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    async with agent_server(home, llm_server.url) as server, http_client(server.url) as client:
        await client.initialize()
        session_id = await client.new_session(workspace)
        result = await _prompt_call(client, session_id, f"{WRITE}out.txt")
        assert result["stopReason"] == "end_turn"  # type: ignore[index]
        # The permission request came on the session's stream and was answered by POST.
        assert [r["method"] for r in client.agent_requests] == ["session/request_permission"]
        assert client.agent_request_streams == [session_id]
        assert (workspace / "out.txt").read_text() == "hello\n"
        kinds = [u["sessionUpdate"] for u in client.updates(session_id)]
        assert "tool_call" in kinds and "tool_call_update" in kinds
        assert "Wrote it." in client.text_of(session_id)


async def test_http_cancel(home: Path, workspace: Path, llm_server: ScriptedLLMServer) -> None:
    async with agent_server(home, llm_server.url) as server, http_client(server.url) as client:
        await client.initialize()
        session_id = await client.new_session(workspace)
        request_id = client.new_id()
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/prompt",
            "params": _prompt(session_id, f"{SLOW} go"),
        }
        await client.send(message, session_id)
        await client.wait_for(lambda: "tick" in client.text_of(session_id))
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        await client.send(cancel, session_id)
        answer = await client.response(request_id)
        assert answer["result"]["stopReason"] == "cancelled"


async def test_http_two_sessions_on_one_connection(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    async with agent_server(home, llm_server.url) as server, http_client(server.url) as client:
        await client.initialize()
        first = await client.new_session(workspace)
        second = await client.new_session(workspace)
        async with anyio.create_task_group() as group:
            group.start_soon(_prompt_call, client, first, "alpha-one")
            group.start_soon(_prompt_call, client, second, "beta-two")
        assert "alpha-one" in client.text_of(first) and "beta-two" not in client.text_of(first)
        assert "beta-two" in client.text_of(second) and "alpha-one" not in client.text_of(second)


async def test_http_load_replays_over_the_session_stream(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    async with agent_server(home, llm_server.url) as server:
        async with http_client(server.url) as first:
            await first.initialize()
            session_id = await first.new_session(workspace)
            await _prompt_call(first, session_id, "remember the subnet")
            assert first.transport.connection_id is not None
            assert (await first.transport.delete()).status_code == 202
            with anyio.fail_after(60):
                await server.registry.wait_closed(first.transport.connection_id)
        async with http_client(server.url) as second:
            await second.initialize()
            await second.transport.open_stream(session_id)  # before load, as the SDK client does
            params = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
            await second.request("session/load", params, stream=session_id)
            await second.wait_for(lambda: "remember the subnet" in second.text_of(session_id))
            kinds = {u["sessionUpdate"] for u in second.updates(session_id)}
            assert "user_message_chunk" in kinds
            # The model client is shared by connections: the first one closing left it usable.
            again = await _prompt_call(second, session_id, "and the route table")
            assert again["stopReason"] == "end_turn"  # type: ignore[index]


async def test_http_resume_after_a_dropped_stream_loses_nothing(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    count = 120
    async with agent_server(home, llm_server.url) as server, http_client(server.url) as client:
        await client.initialize()
        session_id = await client.new_session(workspace)
        request_id = client.new_id()
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/prompt",
            "params": _prompt(session_id, f"{CHUNKS}{count}"),
        }
        await client.send(message, session_id)
        await client.wait_for(lambda: "<5>" in client.text_of(session_id))
        client.transport.drop_stream(session_id)  # the client's HTTP stream breaks mid-turn
        # Last-Event-ID: the last one seen
        await client.transport.open_stream(session_id, resume=True)
        answer = await client.response(request_id)
        assert answer["result"]["stopReason"] == "end_turn"
        assert client.text_of(session_id) == chunk_text(count)  # all chunks, once, in order
        ids = client.transport.seen_ids[session_id]
        assert ids == list(range(1, len(ids) + 1))


async def test_http_resume_too_far_back_is_refused(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    from iac_code.remote.options import RemoteLimits

    limits = RemoteLimits(replay_bytes=64)
    async with (
        agent_server(home, llm_server.url, limits=limits) as server,
        http_client(server.url) as client,
    ):
        await client.initialize()
        session_id = await client.new_session(workspace)
        await _prompt_call(client, session_id, f"{CHUNKS}30")
        client.transport.drop_stream(session_id)
        assert client.transport.http is not None and client.transport.connection_id is not None
        headers = {
            "accept": "text/event-stream",
            "acp-connection-id": client.transport.connection_id,
            "acp-session-id": session_id,
            "last-event-id": "1",
        }
        response = await client.transport.http.get(server.url, headers=headers)
        assert response.status_code == 410


# ---------------------------------------------------------------------- WebSocket


async def test_ws_handshake_and_prompt_with_permission(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    async with agent_server(home, llm_server.url) as server, ws_client(server.ws_url) as client:
        assert client.transport.connection_id
        info = await client.initialize()
        assert info["protocolVersion"] == 1
        session_id = await client.new_session(workspace)
        result = await _prompt_call(client, session_id, f"{WRITE}ws.txt")
        assert result["stopReason"] == "end_turn"  # type: ignore[index]
        assert [r["method"] for r in client.agent_requests] == ["session/request_permission"]
        assert (workspace / "ws.txt").read_text() == "hello\n"


async def test_ws_cancel_and_two_sessions(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    async with agent_server(home, llm_server.url) as server, ws_client(server.ws_url) as client:
        await client.initialize()
        slow = await client.new_session(workspace)
        quick = await client.new_session(workspace)
        request_id = client.new_id()
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/prompt",
            "params": _prompt(slow, f"{SLOW} go"),
        }
        await client.send(message, None)
        await client.wait_for(lambda: "tick" in client.text_of(slow))
        await _prompt_call(client, quick, "quick-one")  # runs while the slow turn streams
        assert "quick-one" in client.text_of(quick) and "tick" not in client.text_of(quick)
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": slow}}
        await client.send(cancel, None)
        assert (await client.response(request_id))["result"]["stopReason"] == "cancelled"


async def test_ws_load_replay(home: Path, workspace: Path, llm_server: ScriptedLLMServer) -> None:
    async with agent_server(home, llm_server.url) as server:
        async with ws_client(server.ws_url) as first:
            await first.initialize()
            session_id = await first.new_session(workspace)
            await _prompt_call(first, session_id, "remember the bucket")
            connection_id = first.transport.connection_id
        assert connection_id is not None
        with anyio.fail_after(60):
            await server.registry.wait_closed(connection_id)
        async with ws_client(server.ws_url) as second:
            await second.initialize()
            params = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
            await second.request("session/load", params)
            assert "remember the bucket" in second.text_of(session_id)


async def test_http_allow_always_on_bash_then_terraform_destroy_still_asks(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    """SPEC §6: an infrastructure-changing command asks even after "allow always"."""
    record = install_stand_in_terraform(workspace)
    destroy = 'PATH="$PWD/bin:$PATH" terraform destroy -auto-approve'
    async with agent_server(home, llm_server.url) as server, http_client(server.url) as client:
        answers = iter(["allow_always", "reject_once"])

        async def answer(_client: WireClient, _frame: object) -> object:
            return {"outcome": {"outcome": "selected", "optionId": next(answers)}}

        client.handlers["session/request_permission"] = answer
        await client.initialize()
        session_id = await client.new_session(workspace)
        await _prompt_call(client, session_id, f"{BASH}echo validate-ok")
        result = await _prompt_call(client, session_id, f"{BASH}{destroy}")
        assert result["stopReason"] == "end_turn"  # type: ignore[index]
        asked = [r["params"]["toolCall"] for r in client.agent_requests]
        assert len(asked) == 2
        assert asked[1]["title"] == f"Changes real infrastructure: {destroy}"
        options = client.agent_requests[1]["params"]["options"]
        assert [o["kind"] for o in options] == ["allow_once", "reject_once"]
    assert not record.exists()
