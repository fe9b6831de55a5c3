"""The ``agent`` tool's nested calls when things go wrong: cancel, crash, replay (SPEC §4.3, §5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_scripted_llm import Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    NO_ANSWER,
    Frame,
    WireClient,
    assert_every_tool_use_answered,
    final_update,
    in_memory_agent,
    selected,
)

pytestmark = pytest.mark.anyio

PARENT = {"iac_code": {"parentToolCallId": "a1"}}


def sub_agent_script() -> list[Turn]:
    return [
        Turn().tool_use("agent", {"task": "Write b.tf.", "description": "Writer"}, id="a1"),
        Turn().tool_use("write_file", {"path": "b.tf", "content": "b\n"}, id="sub_w"),
        Turn().text("sub-agent done"),
        Turn().text("main done"),
    ]


async def allow_parent_only(client: WireClient, frame: Frame) -> object:
    if frame["params"]["toolCall"]["toolCallId"] == "a1":
        return selected("allow_once")
    return NO_ANSWER


async def test_cancel_during_a_nested_permission_wait_closes_both_calls(
    workspace: Path, home: Path
) -> None:
    model = ScriptedModelClient(sub_agent_script(), timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        client = run.client
        client.handlers["session/request_permission"] = allow_parent_only
        session = await client.new_session(workspace)
        prompt_id = await client.start_prompt(session, "delegate")
        asks = await client.wait_for(
            lambda: (
                len(client.requests_for("session/request_permission")) == 2
                and client.requests_for("session/request_permission")
            )
        )
        nested_ask = asks[1]["params"]["toolCall"]
        assert nested_ask["toolCallId"] == "sub_w" and nested_ask["_meta"] == PARENT

        await client.notify("session/cancel", {"sessionId": session})
        answer = await client.response(prompt_id)
        assert answer["result"]["stopReason"] == "cancelled"
        answered_at = client.frames.index(answer)
        for tool_id in ("sub_w", "a1"):
            final = final_update(client, tool_id)
            assert final["status"] == "failed"
            assert final["rawOutput"] == {"interrupted": True}
            final_at = next(
                i for i, f in enumerate(client.frames) if f.get("params", {}).get("update") is final
            )
            assert final_at < answered_at
        assert not (workspace / "b.tf").exists()

        results = {
            e["toolCallId"]
            for e in run.agent.store.load_events(session)
            if e.get("type") == "tool_result"
        }
        assert results == {"a1", "sub_w"}
        model.script.add(Turn().text("after the cancel"))
        assert (await client.prompt(session, "next"))["stopReason"] == "end_turn"
        assert_every_tool_use_answered(model.requests[-1].messages)


async def test_nested_calls_are_closed_in_the_sub_agent_order(workspace: Path, home: Path) -> None:
    model = ScriptedModelClient(sub_agent_script(), timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "delegate")
        order = [
            (u["toolCallId"], u.get("status"))
            for u in run.client.updates(session)
            if u.get("sessionUpdate") in ("tool_call", "tool_call_update")
            and "status" in u
            # the agent's own iac_check of the edited file comes after the turn's calls
            and not u["toolCallId"].startswith("toolu_iac_check_")
        ]
        assert order == [
            ("a1", "pending"), ("a1", "in_progress"),
            ("sub_w", "pending"), ("sub_w", "in_progress"), ("sub_w", "completed"),
            ("a1", "completed"),
        ]  # fmt: skip


async def test_replay_keeps_the_parent_of_nested_calls(workspace: Path, home: Path) -> None:
    model = ScriptedModelClient(sub_agent_script(), timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "delegate")
    async with in_memory_agent(home, model_client=model) as run:
        await run.client.load_session(session, workspace)
        [announced] = [
            u
            for u in run.client.updates(session)
            if u.get("sessionUpdate") == "tool_call" and u["toolCallId"] == "sub_w"
        ]
        assert announced.get("_meta") == PARENT


async def test_a_nested_call_left_open_by_a_crash_is_closed_on_load(
    workspace: Path, home: Path
) -> None:
    model = ScriptedModelClient([Turn().text("hello")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "hi")
        # What the log holds after a kill -9 while a sub-agent's call waited for permission.
        for event in [
            {"type": "user_message", "messageId": "m2",
             "content": [{"type": "text", "text": "go"}]},
            {
                "type": "assistant_message",
                "messageId": "m3",
                "blocks": [{"type": "tool_use", "id": "a1", "name": "agent", "input": {}}],
                "stopReason": "tool_use",
            },
            {"type": "tool_call", "toolCallId": "a1", "title": "Agent: x", "kind": "execute",
             "rawInput": {}, "locations": []},
            {"type": "tool_call", "toolCallId": "sub_w", "title": "Write b.tf", "kind": "edit",
             "rawInput": {}, "locations": [], "_meta": PARENT},
        ]:  # fmt: skip
            run.agent.store.append(session, event)
        await run.agent.shutdown()
    async with in_memory_agent(home, model_client=model) as run:
        await run.client.load_session(session, workspace)
        for tool_id in ("a1", "sub_w"):
            assert final_update(run.client, tool_id)["status"] == "failed"
