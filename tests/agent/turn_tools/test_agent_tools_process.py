"""Tools through a real ``iac-code acp`` subprocess: kill -9 mid-tool, memory across processes."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.agent.history import INTERRUPTED_RESULT
from iac_code.store import SessionStore

from tests.agent.turn_tools.agent_tools_kit import (
    WAIT_S,
    agent_process,
    allow,
    assert_every_tool_use_answered,
    final_update,
    never_answer,
    pid_alive,
    result_text,
    tool_results_in,
    wait_for_file,
)

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

# The agent process imports the runtime and answers initialize first; allow for a slow CI.
PROCESS_WAIT_S = 120.0


@pytest.fixture
def orphan_groups() -> Iterator[list[int]]:
    """Process groups a killed agent left behind; killed at the end of the test."""
    groups: list[int] = []
    yield groups
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


async def test_kill_9_while_a_tool_runs_then_load_repairs_the_history(
    workspace: Path, home: Path, llm: ScriptedLLMServer, orphan_groups: list[int]
) -> None:
    llm.script.add(
        Turn()
        .text("Running.")
        .tool_use("bash", {"command": "echo $$ > shell.pid; sleep 30 & wait"}, id="b1")
    )
    async with agent_process(home, llm.url) as first:
        client = first.client
        session = await client.new_session(workspace)
        await client.start_prompt(session, "run a long command")
        await client.wait_for(
            lambda: any(e.get("status") == "in_progress" for e in client.tool_events("b1")),
            wait_s=PROCESS_WAIT_S,
        )
        orphan_groups.append(int(await wait_for_file(workspace / "shell.pid")))
        first.kill()
        with anyio.fail_after(WAIT_S):
            await first.process.wait()

    llm.script.add(Turn().text("Recovered.").stop("end_turn"))
    async with agent_process(home, llm.url) as second:
        client = second.client
        await client.load_session(session, workspace)
        replay = [
            u for u in client.updates(session)
            if u.get("sessionUpdate") in ("tool_call", "tool_call_update")
        ]  # fmt: skip
        assert [u["toolCallId"] for u in replay] == ["b1", "b1"]
        assert replay[0]["sessionUpdate"] == "tool_call" and replay[0]["title"]
        assert replay[-1]["status"] == "failed"

        result = await client.prompt(session, "what happened?", wait_s=PROCESS_WAIT_S)
        assert result["stopReason"] == "end_turn"
        messages = llm.model_requests[-1].messages
        assert_every_tool_use_answered(messages)
        block = tool_results_in(messages)["b1"]
        assert block["is_error"] is True and INTERRUPTED_RESULT in result_text(block)


async def test_allow_always_survives_a_new_process(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    llm.script.add(
        Turn().tool_use("write_file", {"path": "one.tf", "content": "1\n"}, id="w1"),
        Turn().text("ok").stop("end_turn"),
    )
    async with agent_process(home, llm.url) as first:
        first.client.handlers["session/request_permission"] = allow("allow_always")
        session = await first.client.new_session(workspace)
        await first.client.prompt(session, "write one", wait_s=PROCESS_WAIT_S)
        assert len(first.client.requests_for("session/request_permission")) == 1
    assert (workspace / "one.tf").read_text() == "1\n"

    llm.script.add(
        Turn().tool_use("write_file", {"path": "two.tf", "content": "2\n"}, id="w2"),
        Turn().text("ok").stop("end_turn"),
    )
    async with agent_process(home, llm.url) as second:
        second.client.handlers["session/request_permission"] = allow("reject_once")
        await second.client.load_session(session, workspace)
        await second.client.prompt(session, "write two", wait_s=PROCESS_WAIT_S)
        assert second.client.requests_for("session/request_permission") == []
    assert (workspace / "two.tf").read_text() == "2\n"


async def test_stdin_eof_during_a_permission_wait(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    llm.script.add(Turn().tool_use("write_file", {"path": "a.tf", "content": "a\n"}, id="w1"))
    async with agent_process(home, llm.url) as first:
        first.client.handlers["session/request_permission"] = never_answer
        session = await first.client.new_session(workspace)
        await first.client.start_prompt(session, "write")
        await first.client.wait_for(
            lambda: first.client.requests_for("session/request_permission"),
            wait_s=PROCESS_WAIT_S,
        )
        await first.close_stdin()
        assert await first.wait_exit() == 0

    llm.script.add(Turn().text("ok").stop("end_turn"))
    async with agent_process(home, llm.url) as second:
        await second.client.load_session(session, workspace)
        assert final_update(second.client, "w1")["status"] == "failed"
        await second.client.prompt(session, "again", wait_s=PROCESS_WAIT_S)
    assert not (workspace / "a.tf").exists()
    block = tool_results_in(llm.model_requests[-1].messages)["w1"]
    assert INTERRUPTED_RESULT in result_text(block)


async def test_sigterm_while_a_command_runs_leaves_no_orphans(
    workspace: Path, home: Path, llm: ScriptedLLMServer, orphan_groups: list[int]
) -> None:
    command = "echo $$ > shell.pid; sleep 30 & echo $! > child.pid; wait"
    llm.script.add(Turn().tool_use("bash", {"command": command}, id="b1"))
    async with agent_process(home, llm.url) as agent:
        session = await agent.client.new_session(workspace)
        await agent.client.start_prompt(session, "run")
        shell_pid = int(await wait_for_file(workspace / "shell.pid"))
        orphan_groups.append(shell_pid)
        child_pid = int(await wait_for_file(workspace / "child.pid"))
        agent.kill(signal.SIGTERM)
        assert await agent.wait_exit() == 0
        assert not pid_alive(child_pid) and not pid_alive(shell_pid)
        # The interrupted call was closed on disk before the process exited.
        events = SessionStore(home).load_events(session)
        assert [e["status"] for e in events if e.get("type") == "tool_result"] == ["failed"]
