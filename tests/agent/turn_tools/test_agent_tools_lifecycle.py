"""Each tool through the agent: the wire lifecycle and what the model gets back (SPEC §5).

The key flows (write, edit, bash) use the real ``anthropic`` SDK against the scripted LLM
server, so the tool_result is checked in the HTTP request the model endpoint received; the
read-only tools use the in-memory fake model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    assert_every_tool_use_answered,
    final_update,
    in_memory_agent,
    result_text,
    statuses,
    tool_results_in,
)

pytestmark = pytest.mark.anyio


def tool_turn(name: str, tool_input: dict[str, Any], tool_id: str) -> Turn:
    return Turn().text(f"Calling {name}.").tool_use(name, tool_input, id=tool_id).stop("tool_use")


def check_announcement(
    event: dict[str, Any],
    *,
    title: str,
    kind: str,
    raw_input: dict[str, Any],
    location: Path | None,
) -> None:
    assert event["sessionUpdate"] == "tool_call"
    assert event["status"] == "pending"
    assert event["title"] == title
    assert event["kind"] == kind
    assert event["rawInput"] == raw_input
    if location is not None:
        assert event["locations"][0]["path"] == str(location)


# --- read-only tools (in-memory fake model) ------------------------------------------------

READ_CASES = [
    pytest.param(
        "read_file", {"path": "main.tf"}, "Read main.tf", "read", "main.tf",
        '     1\tresource "null_resource" "demo" {}', id="read_file",
    ),
    pytest.param(
        "list_files", {"path": "."}, "List .", "read", ".", "modules/", id="list_files",
    ),
    pytest.param(
        "glob", {"pattern": "**/*.tf"}, "Find **/*.tf", "search", ".", "modules/vars.tf",
        id="glob",
    ),
    pytest.param(
        "grep", {"pattern": "variable", "path": "modules"}, "Search for 'variable' in modules",
        "search", "modules", 'variable "region"', id="grep",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "tool_input", "title", "kind", "location", "expected"), READ_CASES
)
async def test_read_only_tool_runs_without_asking(
    workspace: Path,
    home: Path,
    tool: str,
    tool_input: dict[str, Any],
    title: str,
    kind: str,
    location: str,
    expected: str,
) -> None:
    model = ScriptedModelClient([tool_turn(tool, tool_input, "call_1")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        client = run.client
        session = await client.new_session(workspace)
        result = await client.prompt(session, "look around")

        assert result["stopReason"] == "end_turn"
        events = client.tool_events("call_1")
        check_announcement(
            events[0],
            title=title,
            kind=kind,
            raw_input=tool_input,
            location=(workspace / location).resolve() if location != "." else workspace,
        )
        assert statuses(client, "call_1") == ["pending", "in_progress", "completed"]
        assert not client.requests_for("session/request_permission")
        final = final_update(client, "call_1")
        assert final["rawOutput"]
        assert final["content"][0]["type"] == "content"
        # The next model request carries the result.
        sent_back = tool_results_in(model.requests[-1].messages)["call_1"]
        assert expected in result_text(sent_back)
        assert not sent_back.get("is_error")


async def test_big_output_is_capped_with_a_note(workspace: Path, home: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"line {n} {'x' * 60}\n" for n in range(1999)))
    model = ScriptedModelClient([tool_turn("read_file", {"path": "big.txt"}, "big")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "read it")
        text = result_text(tool_results_in(model.requests[-1].messages)["big"])
        assert len(text) <= 40_000
        assert "[output truncated:" in text


# --- key flows through the real SDK ----------------------------------------------------------


async def test_write_file_lifecycle_over_the_sdk(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    tool_input = {"path": "out/new.tf", "content": "# created\n"}
    llm.script.add(tool_turn("write_file", tool_input, "w1"))
    async with in_memory_agent(home, llm_url=llm.url) as run:
        client = run.client
        session = await client.new_session(workspace)
        result = await client.prompt(session, "write it")

        assert result["stopReason"] == "end_turn"
        target = workspace / "out" / "new.tf"
        assert target.read_text() == "# created\n"
        events = client.tool_events("w1")
        check_announcement(
            events[0], title="Write out/new.tf", kind="edit", raw_input=tool_input, location=target
        )
        [ask] = client.requests_for("session/request_permission")
        assert ask["params"]["toolCall"]["toolCallId"] == "w1"
        assert ask["params"]["sessionId"] == session
        assert {o["optionId"] for o in ask["params"]["options"]} == {
            "allow_once", "allow_always", "reject_once", "reject_always",
        }  # fmt: skip
        # in_progress only after the permission was answered.
        permission_at = client.frames.index(ask)
        in_progress_at = next(
            i for i, f in enumerate(client.frames)
            if f.get("method") == "session/update"
            and f["params"]["update"].get("status") == "in_progress"
        )  # fmt: skip
        assert permission_at < in_progress_at
        assert statuses(client, "w1") == ["pending", "in_progress", "completed"]
        final = final_update(client, "w1")
        assert final["content"] == [
            {"type": "diff", "path": str(target), "oldText": None, "newText": "# created\n"}
        ]
        assert final["rawOutput"]["created"] is True

        body = llm.model_requests[-1]
        assert_every_tool_use_answered(body.messages)
        sent_back = tool_results_in(body.messages)["w1"]
        assert "Created out/new.tf" in result_text(sent_back)


async def test_edit_file_reports_a_diff(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    tool_input = {"path": "main.tf", "old_string": "# end", "new_string": "# the end"}
    llm.script.add(tool_turn("edit_file", tool_input, "e1"))
    async with in_memory_agent(home, llm_url=llm.url) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "edit it")

        assert (workspace / "main.tf").read_text().endswith("# the end\n")
        final = final_update(run.client, "e1")
        assert final["status"] == "completed"
        [diff] = final["content"]
        assert diff["type"] == "diff"
        assert diff["oldText"].endswith("# end\n") and diff["newText"].endswith("# the end\n")
        assert "replaced 1 occurrence" in result_text(
            tool_results_in(llm.model_requests[-1].messages)["e1"]
        )


async def test_bash_lifecycle_over_the_sdk(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    tool_input = {"command": "echo hello-$((40+2)); exit 3"}
    llm.script.add(tool_turn("bash", tool_input, "b1"))
    async with in_memory_agent(home, llm_url=llm.url) as run:
        client = run.client
        session = await client.new_session(workspace)
        await client.prompt(session, "run it")

        check_announcement(
            client.tool_events("b1")[0],
            title="Run echo hello-$((40+2)); exit 3",
            kind="execute",
            raw_input=tool_input,
            location=None,
        )
        assert len(client.requests_for("session/request_permission")) == 1
        final = final_update(client, "b1")
        assert final["status"] == "failed"  # a non-zero exit is a failed call
        assert final["rawOutput"]["exitCode"] == 3
        assert "hello-42" in final["content"][0]["content"]["text"]
        sent_back = tool_results_in(llm.model_requests[-1].messages)["b1"]
        assert sent_back["is_error"] is True
        assert "hello-42" in result_text(sent_back) and "[exit code: 3]" in result_text(sent_back)


async def test_unknown_tool_fails_and_the_model_is_told(workspace: Path, home: Path) -> None:
    model = ScriptedModelClient([tool_turn("teleport", {"to": "mars"}, "u1")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        result = await run.client.prompt(session, "go")
        assert result["stopReason"] == "end_turn"
        assert final_update(run.client, "u1")["status"] == "failed"
        block = tool_results_in(model.requests[-1].messages)["u1"]
        assert block["is_error"] is True and "no tool named" in result_text(block)


# --- the sub-agent -----------------------------------------------------------------------------


async def test_sub_agent_tool_calls_are_nested_and_visible(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    llm.script.add(
        tool_turn("agent", {"task": "Read main.tf and report.", "description": "Survey"}, "a1"),
        # The sub-agent's own requests:
        tool_turn("read_file", {"path": "main.tf"}, "sub_read"),
        tool_turn("write_file", {"path": "notes.md", "content": "survey\n"}, "sub_write"),
        Turn().text("Report: one null_resource.").stop("end_turn"),
        # Back in the main loop:
        Turn().text("Done.").stop("end_turn"),
    )
    async with in_memory_agent(home, llm_url=llm.url) as run:
        client = run.client
        session = await client.new_session(workspace)
        result = await client.prompt(session, "survey")

        assert result["stopReason"] == "end_turn"
        assert client.tool_events("a1")[0]["title"] == "Agent: Survey"
        for nested in ("sub_read", "sub_write"):
            announced = client.tool_events(nested)[0]
            assert announced["_meta"]["iac_code"]["parentToolCallId"] == "a1"
            assert final_update(client, nested)["status"] == "completed"
        # The nested write asked the client, with its own id.
        asked = [r["params"]["toolCall"]["toolCallId"] for r in client.requests_for(
            "session/request_permission"
        )]  # fmt: skip
        assert asked == ["a1", "sub_write"]
        assert (workspace / "notes.md").read_text() == "survey\n"
        final = final_update(client, "a1")
        assert final["status"] == "completed"
        assert "Report: one null_resource." in final["content"][0]["content"]["text"]
        # The sub-agent saw its own tool results; the main model saw the report.
        sub_request = llm.model_requests[3]
        assert set(tool_results_in(sub_request.messages)) == {"sub_read", "sub_write"}
        main_request = llm.model_requests[-1]
        assert_every_tool_use_answered(main_request.messages)
        assert "Report: one null_resource." in result_text(
            tool_results_in(main_request.messages)["a1"]
        )


# --- limits ------------------------------------------------------------------------------------


async def test_hanging_bash_times_out_and_the_turn_continues(workspace: Path, home: Path) -> None:
    model = ScriptedModelClient(
        [
            tool_turn("bash", {"command": "sleep 1000", "timeout": 1}, "slow"),
            Turn().text("It timed out.").stop("end_turn"),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        result = await run.client.prompt(session, "wait", wait_s=20)
        assert result["stopReason"] == "end_turn"
        final = final_update(run.client, "slow")
        assert final["status"] == "failed"
        assert final["rawOutput"]["timedOut"] is True
        block = tool_results_in(model.requests[-1].messages)["slow"]
        assert block["is_error"] is True and "timed out after 1 s" in result_text(block)


async def test_max_turn_requests_stops_a_model_that_keeps_asking(
    workspace: Path, home: Path
) -> None:
    def always_a_tool(body: dict[str, Any]) -> Turn:
        count = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return tool_turn("list_files", {}, f"loop_{count}")

    model = ScriptedModelClient({"turns": [], "fallback": always_a_tool}, timing=False)
    async with in_memory_agent(home, model_client=model, max_turn_requests=3) as run:
        session = await run.client.new_session(workspace)
        result = await run.client.prompt(session, "loop")
        assert result["stopReason"] == "max_turn_requests"
        assert len(model.requests) == 3
        announced = [
            u["toolCallId"]
            for u in run.client.updates(session)
            if u.get("sessionUpdate") == "tool_call"
        ]
        assert announced == ["loop_0", "loop_1", "loop_2"]
        # Every one of them finished before the prompt answered.
        for tool_id in ("loop_0", "loop_1", "loop_2"):
            assert final_update(run.client, tool_id)["status"] == "completed"


async def test_tool_calls_carry_the_tool_name_live_and_in_replay(
    workspace: Path, home: Path
) -> None:
    # ACP 1.22 added ToolCall.name: the title is for people, the name tells tools apart.
    model = ScriptedModelClient([tool_turn("list_files", {"path": "."}, "n1")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "look around")
        announced = run.client.tool_events("n1")[0]
        assert announced["sessionUpdate"] == "tool_call"
        assert announced["name"] == "list_files" and announced["title"] == "List ."

    async with in_memory_agent(home, model_client=ScriptedModelClient([])) as run:
        await run.client.load_session(session, workspace)
        replayed = [u for u in run.client.updates(session) if u.get("toolCallId") == "n1"]
        assert replayed[0]["sessionUpdate"] == "tool_call" and replayed[0]["name"] == "list_files"
