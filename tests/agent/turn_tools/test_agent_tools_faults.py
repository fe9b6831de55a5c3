"""Bad input and faults around tools (SPEC §5, §12): invalid input, client errors, concurrency."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    NO_ANSWER,
    ErrorAnswer,
    FakeEditor,
    Frame,
    WireClient,
    final_update,
    in_memory_agent,
    result_text,
    statuses,
    tool_results_in,
    tool_use_ids_in,
)

pytestmark = pytest.mark.anyio


async def test_invalid_tool_input_fails_without_asking(workspace: Path, home: Path) -> None:
    model = ScriptedModelClient(
        [Turn().tool_use("write_file", {"path": "a.tf"}, id="bad")], timing=False
    )
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        assert (await run.client.prompt(session, "write"))["stopReason"] == "end_turn"
        assert run.client.requests_for("session/request_permission") == []
        assert statuses(run.client, "bad")[-1] == "failed"
        assert run.client.tool_events("bad")[0]["title"] == "write_file"
        block = tool_results_in(model.requests[-1].messages)["bad"]
        assert block["is_error"] is True and "Invalid input for write_file" in result_text(block)
        assert not (workspace / "a.tf").exists()


async def test_read_only_calls_of_one_response_all_answer_in_order(
    workspace: Path, home: Path
) -> None:
    turn = (
        Turn()
        .tool_use("read_file", {"path": "main.tf"}, id="c1")
        .tool_use("grep", {"pattern": "region"}, id="c2")
        .tool_use("glob", {"pattern": "*.tf"}, id="c3")
        .tool_use("write_file", {"path": "w.txt", "content": "w\n"}, id="c4")
        .tool_use("list_files", {}, id="c5")
    )
    model = ScriptedModelClient([turn], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "many")
        messages = model.requests[-1].messages
        expected = ["c1", "c2", "c3", "c4", "c5"]
        assert tool_use_ids_in(messages) == expected
        [results_message] = [
            m
            for m in messages
            if m["role"] == "user" and m["content"][0].get("type") == "tool_result"
        ]
        assert [b["tool_use_id"] for b in results_message["content"]] == expected
        for tool_id in expected:
            assert final_update(run.client, tool_id)["status"] == "completed"


async def test_client_write_error_fails_the_call(workspace: Path, home: Path) -> None:
    editor = FakeEditor()

    async def refuse(client: WireClient, frame: Frame) -> Any:
        return ErrorAnswer(-32603, "The editor could not save the file.")

    model = ScriptedModelClient(
        [Turn().tool_use("write_file", {"path": "a.tf", "content": "a"}, id="w1")], timing=False
    )
    async with in_memory_agent(
        home, model_client=model, capabilities=FakeEditor.CAPABILITIES
    ) as run:
        editor.install(run.client)
        run.client.handlers["fs/write_text_file"] = refuse
        session = await run.client.new_session(workspace)
        assert (await run.client.prompt(session, "write"))["stopReason"] == "end_turn"
        assert final_update(run.client, "w1")["status"] == "failed"
        text = result_text(tool_results_in(model.requests[-1].messages)["w1"])
        assert "Could not write" in text and "could not save" in text


async def test_cancel_during_a_client_terminal_releases_it(workspace: Path, home: Path) -> None:
    editor = FakeEditor()

    async def never_exits(client: WireClient, frame: Frame) -> Any:
        return NO_ANSWER

    model = ScriptedModelClient(
        [Turn().tool_use("bash", {"command": "sleep 1000"}, id="b1"), Turn().text("next")],
        timing=False,
    )
    async with in_memory_agent(
        home, model_client=model, capabilities=FakeEditor.CAPABILITIES
    ) as run:
        client = run.client
        editor.install(client)
        client.handlers["terminal/wait_for_exit"] = never_exits
        session = await client.new_session(workspace)
        prompt_id = await client.start_prompt(session, "wait")
        await client.wait_for(lambda: client.requests_for("terminal/wait_for_exit"))
        await client.notify("session/cancel", {"sessionId": session})
        answer = await client.response(prompt_id)
        assert answer["result"]["stopReason"] == "cancelled"
        assert editor.released == ["term-1"]
        release_at = client.frames.index(client.requests_for("terminal/release")[0])
        assert release_at < client.frames.index(answer)
        assert final_update(client, "b1")["status"] == "failed"
        assert (await client.prompt(session, "next"))["stopReason"] == "end_turn"


async def test_a_tool_crash_is_a_failed_call_not_a_failed_turn(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from iac_code.tools.list_files import ListFilesTool

    async def explode(self: Any, tool_input: Any, ctx: Any, access: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ListFilesTool, "_run", explode)
    model = ScriptedModelClient([Turn().tool_use("list_files", {}, id="l1")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        assert (await run.client.prompt(session, "list"))["stopReason"] == "end_turn"
        assert final_update(run.client, "l1")["status"] == "failed"
        assert "disk on fire" in result_text(tool_results_in(model.requests[-1].messages)["l1"])
