"""Cancelling a turn while a tool waits for permission or runs (SPEC §4.3, §12)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.agent.history import INTERRUPTED_RESULT
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    assert_every_tool_use_answered,
    final_update,
    in_memory_agent,
    never_answer,
    pid_alive,
    result_text,
    selected,
    tool_results_in,
    wait_for_file,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("how", ["session/cancel", "$/cancel_request"])
async def test_cancel_while_waiting_for_permission(
    workspace: Path, home: Path, llm: ScriptedLLMServer, how: str
) -> None:
    llm.script.add(
        Turn().text("Writing.").tool_use("write_file", {"path": "a.tf", "content": "x"}, id="w1"),
        Turn().text("Fresh start.").stop("end_turn"),
    )
    async with in_memory_agent(home, llm_url=llm.url) as run:
        client = run.client
        client.handlers["session/request_permission"] = never_answer
        session = await client.new_session(workspace)
        prompt_id = await client.start_prompt(session, "write")
        ask = await client.wait_for(lambda: client.requests_for("session/request_permission"))
        if how == "session/cancel":
            await client.notify("session/cancel", {"sessionId": session})
        else:
            await client.notify("$/cancel_request", {"requestId": prompt_id})

        answer = await client.response(prompt_id)
        assert answer["result"]["stopReason"] == "cancelled"
        # The tool call ended before the prompt answered.
        final = final_update(client, "w1")
        assert final["status"] == "failed"
        assert client.frames.index(answer) > client.frames.index(
            next(f for f in client.frames if f.get("params", {}).get("update") is final)
        )
        # A late answer is ignored: nothing is written, the agent stays healthy.
        await client.answer(ask[0]["id"], selected("allow_once"))
        result = await client.prompt(session, "again")
        assert result["stopReason"] == "end_turn"
        assert not (workspace / "a.tf").exists()

        events = run.agent.store.load_events(session)
        [persisted] = [e for e in events if e.get("type") == "tool_result"]
        assert persisted["toolCallId"] == "w1" and persisted["isError"] is True
        assert INTERRUPTED_RESULT in persisted["modelContent"]
        messages = llm.model_requests[-1].messages
        assert_every_tool_use_answered(messages)
        assert INTERRUPTED_RESULT in result_text(tool_results_in(messages)["w1"])
        # The next prompt is its own user message, not merged into the cancelled one.
        user_texts = [
            block["text"]
            for m in messages
            if m["role"] == "user" and isinstance(m["content"], list)
            for block in m["content"]
            if block.get("type") == "text"
        ]
        assert "write" in user_texts and "again" in user_texts


async def test_cancel_kills_a_running_command_and_its_children(workspace: Path, home: Path) -> None:
    command = "echo $$ > shell.pid; sleep 30 & echo $! > child.pid; wait"
    model = ScriptedModelClient(
        [Turn().tool_use("bash", {"command": command}, id="b1"), Turn().text("next")],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        client = run.client
        session = await client.new_session(workspace)
        prompt_id = await client.start_prompt(session, "run")
        await client.wait_for(
            lambda: any(e.get("status") == "in_progress" for e in client.tool_events("b1"))
        )
        shell_pid = int(await wait_for_file(workspace / "shell.pid"))
        child_pid = int(await wait_for_file(workspace / "child.pid"))
        assert pid_alive(child_pid)

        await client.notify("session/cancel", {"sessionId": session})
        answer = await client.response(prompt_id)
        assert answer["result"]["stopReason"] == "cancelled"
        assert not pid_alive(shell_pid)
        assert not pid_alive(child_pid)
        assert final_update(client, "b1")["status"] == "failed"

        assert (await client.prompt(session, "next"))["stopReason"] == "end_turn"
        assert_every_tool_use_answered(model.requests[-1].messages)
