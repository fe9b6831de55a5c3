"""Edits are approved with their diff (SPEC §5): the ``tool_call`` of ``write_file`` and
``edit_file`` carries the ACP ``diff`` before the permission request; the final update
keeps it. Nothing is written before the answer, and restricted paths are not read early."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import Turn
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.turn_tools.agent_tools_kit import (
    WireClient,
    allow,
    final_update,
    in_memory_agent,
)

pytestmark = pytest.mark.anyio

OLD = 'resource "null_resource" "demo" {}\n# end\n'


def first_index(client: WireClient, predicate: Any) -> int:
    return next(i for i, frame in enumerate(client.frames) if predicate(frame))


def announcement(client: WireClient, tool_id: str) -> dict[str, Any]:
    [event] = [e for e in client.tool_events(tool_id) if e.get("sessionUpdate") == "tool_call"]
    return event


def is_permission_request(frame: dict[str, Any]) -> bool:
    return frame.get("method") == "session/request_permission"


def is_announcement(tool_id: str) -> Any:
    def check(frame: dict[str, Any]) -> bool:
        update = (frame.get("params") or {}).get("update") or {}
        return update.get("sessionUpdate") == "tool_call" and update.get("toolCallId") == tool_id

    return check


async def run_one(
    workspace: Path, home: Path, turn: Turn, answer: str = "allow_once"
) -> WireClient:
    model = ScriptedModelClient([turn, Turn().text("done")], timing=False)
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow(answer)
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "change it")
        return run.client


async def test_an_edit_shows_its_diff_before_the_permission_request(
    workspace: Path, home: Path
) -> None:
    edit = {"path": "main.tf", "old_string": "demo", "new_string": "web"}
    client = await run_one(
        workspace, home, Turn().tool_use("edit_file", edit, id="e1"), "reject_once"
    )
    diff = {
        "type": "diff",
        "path": str(workspace / "main.tf"),
        "oldText": OLD,
        "newText": OLD.replace("demo", "web"),
    }
    assert announcement(client, "e1")["content"] == [diff]
    assert first_index(client, is_announcement("e1")) < first_index(client, is_permission_request)
    [asked] = client.requests_for("session/request_permission")
    assert asked["params"]["toolCall"]["content"] == [diff]
    assert (workspace / "main.tf").read_text() == OLD  # rejected: nothing written


async def test_a_new_file_shows_a_diff_without_old_text_and_keeps_it_when_done(
    workspace: Path, home: Path
) -> None:
    write = {"path": "outputs.tf", "content": 'output "id" {}\n'}
    client = await run_one(workspace, home, Turn().tool_use("write_file", write, id="w1"))
    diff = {
        "type": "diff",
        "path": str(workspace / "outputs.tf"),
        "oldText": None,
        "newText": 'output "id" {}\n',
    }
    assert announcement(client, "w1")["content"] == [diff]
    final = final_update(client, "w1")
    assert final["status"] == "completed" and final["content"] == [diff]


async def test_a_large_file_gets_a_bounded_excerpt(workspace: Path, home: Path) -> None:
    lines = [f'variable "v{n}" {{}}\n' for n in range(40_000)]
    (workspace / "big.txt").write_text("".join(lines))
    edit = {"path": "big.txt", "old_string": 'variable "v20000" {}', "new_string": "# gone"}
    client = await run_one(workspace, home, Turn().tool_use("edit_file", edit, id="e1"))
    [diff] = announcement(client, "e1")["content"]
    assert diff["type"] == "diff"
    assert len(diff["oldText"]) + len(diff["newText"]) < 2_000
    assert "# gone" in diff["newText"] and 'variable "v20000"' in diff["oldText"]


async def test_an_edit_that_would_fail_shows_no_diff(workspace: Path, home: Path) -> None:
    edit = {"path": "main.tf", "old_string": "no such text", "new_string": "x"}
    client = await run_one(workspace, home, Turn().tool_use("edit_file", edit, id="e1"))
    assert "content" not in announcement(client, "e1")
    assert final_update(client, "e1")["status"] == "failed"


async def test_a_sensitive_or_outside_file_is_not_read_before_the_answer(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    (workspace / ".env").write_text("TOKEN=do-not-show\n")
    outside = tmp_path / "outside.tf"
    outside.write_text("secret = 1\n")
    model = ScriptedModelClient(
        [
            Turn().tool_use("write_file", {"path": ".env", "content": "A=1\n"}, id="w1"),
            Turn().tool_use("write_file", {"path": str(outside), "content": "x\n"}, id="w2"),
            Turn().text("done"),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        run.client.handlers["session/request_permission"] = allow("reject_once")
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "change them")
        for tool_id in ("w1", "w2"):
            assert "content" not in announcement(run.client, tool_id)
