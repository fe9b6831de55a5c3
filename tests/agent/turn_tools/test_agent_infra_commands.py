"""Infrastructure-changing commands always ask (SPEC §6), through the whole agent.

The issue's case: after "allow always" for a harmless ``bash`` call, a later
``terraform destroy`` must still ask, with its own title and only allow once / reject, and
its answer is never remembered. A stand-in ``terraform`` on PATH records whether it ran.
Over stdio (a real ``iac-code acp`` subprocess) here; HTTP and v2 in their own folders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    ErrorAnswer,
    WireClient,
    agent_process,
    answers,
    in_memory_agent,
    install_stand_in_terraform,
    result_text,
    selected,
    statuses,
    tool_results_in,
)

pytestmark = pytest.mark.anyio

HARMLESS = "echo validate-ok"
DESTROY = 'PATH="$PWD/bin:$PATH" terraform destroy -auto-approve'
TITLE = "Changes real infrastructure: " + DESTROY
PROCESS_WAIT_S = 30.0


def bash(command: str, tool_id: str) -> Turn:
    return Turn().tool_use("bash", {"command": command}, id=tool_id)


def permission_requests(client: WireClient) -> list[dict[str, Any]]:
    return [frame["params"] for frame in client.requests_for("session/request_permission")]


def rules_on_disk(run: Any, session: str) -> list[dict[str, Any]]:
    return [e for e in run.agent.store.load_events(session) if e.get("type") == "permission_rule"]


async def test_allow_always_then_destroy_asks_in_memory(workspace: Path, home: Path) -> None:
    record = install_stand_in_terraform(workspace)
    model = ScriptedModelClient(
        [
            bash(HARMLESS, "b1"),
            Turn().text("ok"),
            bash(DESTROY, "b2"),
            Turn().text("not run"),
            bash(DESTROY, "b3"),
            Turn().text("destroyed"),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = answers(
            selected("allow_always"), selected("reject_once"), selected("allow_once")
        )
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "check")
        await run.client.prompt(session, "destroy it")
        requests = permission_requests(run.client)
        assert [r["toolCall"]["toolCallId"] for r in requests] == ["b1", "b2"]
        asked = requests[1]
        assert asked["toolCall"]["title"] == TITLE
        assert [o["optionId"] for o in asked["options"]] == ["allow_once", "reject_once"]
        assert asked["_meta"]["iac_code"]["reason"] == (
            "changes real infrastructure: terraform destroy"
        )
        assert not record.exists()
        assert statuses(run.client, "b2")[-1] == "failed"
        text = result_text(tool_results_in(model.requests[-1].messages)["b2"])
        assert "changes real infrastructure (terraform destroy)" in text

        # Allowed once, it runs; the answer is not remembered (only the harmless one is).
        await run.client.prompt(session, "destroy it now")
        assert record.read_text() == "destroy -auto-approve\n"
        assert len(permission_requests(run.client)) == 3
        assert rules_on_disk(run, session) == [
            {"type": "permission_rule", "tool": "bash", "choice": "allow_always"}
        ]


async def test_a_client_that_cannot_be_asked_gets_a_refusal_the_model_can_act_on(
    workspace: Path, home: Path
) -> None:
    record = install_stand_in_terraform(workspace)
    model = ScriptedModelClient([bash(DESTROY, "b1"), Turn().text("ok")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = answers(
            ErrorAnswer(-32601, "Method not found")
        )
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "destroy")
    assert not record.exists()
    block = tool_results_in(model.requests[-1].messages)["b1"]
    text = result_text(block)
    assert block["is_error"] is True
    assert "the client could not be asked" in text
    assert "Show the user the exact command" in text


async def test_read_only_mode_refuses_an_infra_change_without_asking(
    workspace: Path, home: Path
) -> None:
    record = install_stand_in_terraform(workspace)
    model = ScriptedModelClient([bash(DESTROY, "b1"), Turn().text("ok")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.request("session/set_mode", {"sessionId": session, "modeId": "read_only"})
        await run.client.prompt(session, "destroy")
        assert permission_requests(run.client) == []
    assert not record.exists()
    text = result_text(tool_results_in(model.requests[-1].messages)["b1"])
    assert "read-only mode" in text and "terraform destroy" in text


@pytest.mark.subprocess
async def test_allow_always_then_destroy_asks_over_stdio(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    record = install_stand_in_terraform(workspace)
    llm.script.add(
        bash(HARMLESS, "b1"), Turn().text("ok").stop("end_turn"),
        bash(DESTROY, "b2"), Turn().text("refused").stop("end_turn"),
    )  # fmt: skip
    async with agent_process(home, llm.url) as agent:
        client = agent.client
        client.handlers["session/request_permission"] = answers(
            selected("allow_always"), selected("reject_once")
        )
        session = await client.new_session(workspace)
        await client.prompt(session, "check", wait_s=PROCESS_WAIT_S)
        await client.prompt(session, "destroy it", wait_s=PROCESS_WAIT_S)
        requests = permission_requests(client)
        assert [r["toolCall"]["toolCallId"] for r in requests] == ["b1", "b2"]
        assert requests[1]["toolCall"]["title"] == TITLE
        assert [o["kind"] for o in requests[1]["options"]] == ["allow_once", "reject_once"]
        assert statuses(client, "b2")[-1] == "failed"
    assert not record.exists()
