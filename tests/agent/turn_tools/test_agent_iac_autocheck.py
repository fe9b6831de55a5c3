"""The agent checks edited IaC files by itself at the end of a turn (issue 33).

The check is a tool call of its own on the wire (``iac_check``, kind read, asked nothing);
findings are handed to the model as that call's result and it gets one more step; a clean
check ends the turn without another model request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    WireClient,
    allow,
    assert_every_tool_use_answered,
    final_update,
    in_memory_agent,
    result_text,
    tool_results_in,
)

pytestmark = pytest.mark.anyio

BROKEN = 'resource "null_resource" "x" {\n  triggers = {\n    a = \n  }\n}\n'
CLEAN = 'variable "region" {\n  type = string\n}\n'


def check_calls(client: WireClient) -> list[dict[str, Any]]:
    return [
        update
        for update in client.updates()
        if update.get("sessionUpdate") == "tool_call"
        and str(update.get("toolCallId", "")).startswith("toolu_iac_check_")
    ]


async def test_findings_after_an_edit_go_back_to_the_model(workspace: Path, home: Path) -> None:
    model = ScriptedModelClient(
        [
            Turn().tool_use("write_file", {"path": "net/main.tf", "content": BROKEN}, id="w1"),
            Turn().text("Wrote it."),
            Turn().text("The check found a syntax error on line 3."),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("allow_once")
        session = await run.client.new_session(workspace)
        result = await run.client.prompt(session, "add a resource")
        assert result["stopReason"] == "end_turn"
        [call] = check_calls(run.client)
        assert call["kind"] == "read" and call["title"] == "Check IaC in net"
        asked = run.client.requests_for("session/request_permission")
        assert [a["params"]["toolCall"]["toolCallId"] for a in asked] == ["w1"]
        final = final_update(run.client, call["toolCallId"])
        assert final["status"] == "completed"
        assert any(d["severity"] == "error" for d in final["rawOutput"]["diagnostics"])
    assert len(model.requests) == 3
    messages = model.requests[-1].messages
    assert_every_tool_use_answered(messages)
    text = result_text(tool_results_in(messages)[call["toolCallId"]])
    assert "net/main.tf:3 error" in text


async def test_a_clean_check_ends_the_turn_without_another_request(
    workspace: Path, home: Path
) -> None:
    model = ScriptedModelClient(
        [
            Turn().tool_use("write_file", {"path": "vars.tf", "content": CLEAN}, id="w1"),
            Turn().text("Wrote it."),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "add a variable")
        [call] = check_calls(run.client)
        final = final_update(run.client, call["toolCallId"])
        assert final["status"] == "completed" and "No problems found" in str(final["content"])
    assert len(model.requests) == 2


async def test_a_turn_without_iac_edits_runs_no_check(workspace: Path, home: Path) -> None:
    model = ScriptedModelClient(
        [
            Turn().tool_use("write_file", {"path": "notes.md", "content": "hi\n"}, id="w1"),
            Turn().text("ok"),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "note")
        assert check_calls(run.client) == []
