"""update_plan: the model's plan reaches the client as ACP plan updates and survives load."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_scripted_llm import Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import in_memory_agent

pytestmark = pytest.mark.anyio

PLAN = [
    {"content": "Read the VPC module", "status": "completed", "priority": "high"},
    {"content": "Add flow logs", "status": "in_progress", "priority": "medium"},
]


async def test_a_plan_is_sent_without_asking_and_replayed_on_load(
    workspace: Path, home: Path
) -> None:
    model = ScriptedModelClient(
        [
            Turn().tool_use("update_plan", {"entries": PLAN}, id="plan_1").stop("tool_use"),
            Turn().text("Working on it.").stop("end_turn"),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        client = run.client
        session = await client.new_session(workspace)
        result = await client.prompt(session, "add flow logs")
        assert result["stopReason"] == "end_turn"
        plans = [u for u in client.updates(session) if u["sessionUpdate"] == "plan"]
        assert plans == [{"sessionUpdate": "plan", "entries": PLAN}]
        assert not client.requests_for("session/request_permission")
        sent_back = model.requests[1].messages[-1]["content"][0]
        assert sent_back["tool_use_id"] == "plan_1"
        assert "2 steps, 1 completed" in sent_back["content"]

    async with in_memory_agent(home, model_client=ScriptedModelClient([])) as run:
        await run.client.load_session(session, workspace)
        replayed = [u for u in run.client.updates(session) if u["sessionUpdate"] == "plan"]
        assert replayed == [{"sessionUpdate": "plan", "entries": PLAN}]
