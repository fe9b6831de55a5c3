"""The registry, the model-facing specs, the agent tool and the shared text helpers."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from iac_code.tools.agent_tool import AgentTool
from iac_code.tools.contract import Access, JsonDict, Tool, ToolContext, ToolOutcome
from iac_code.tools.registry import default_tools, tool_specs_for_model
from iac_code.tools.text import cap_text, looks_binary
from iac_code.tools.validation import validate_input

ACP_TOOL_KINDS = {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"}
# The tools of SPEC §5, plus update_plan (the model's plan as ACP plan updates).
TOOLS = ["read_file", "list_files", "glob", "grep", "write_file", "edit_file", "bash", "web_fetch",
         "iac_check", "iac_plan", "agent", "update_plan"]  # fmt: skip


def test_default_tools_are_the_nine_plus_the_plan() -> None:
    tools = default_tools()
    assert sorted(tools) == sorted(TOOLS)
    subagent_tools = default_tools(include_agent=False)
    assert "agent" not in subagent_tools and "update_plan" not in subagent_tools
    for name, tool in tools.items():
        assert tool.name == name
        assert tool.kind in ACP_TOOL_KINDS
        assert len(tool.description) > 40


def test_specs_for_model() -> None:
    specs = tool_specs_for_model(default_tools())
    assert [spec["name"] for spec in specs] == TOOLS
    for spec in specs:
        assert set(spec) == {"name", "description", "input_schema"}
        schema = spec["input_schema"]
        assert schema["type"] == "object"
        for name in schema.get("required", []):
            assert name in schema["properties"]
        for prop in schema["properties"].values():
            assert prop.get("description")


def test_read_only_flags() -> None:
    tools = default_tools()
    assert {name for name, tool in tools.items() if tool.read_only} == {
        "read_file", "list_files", "glob", "grep", "web_fetch", "iac_check", "update_plan"
    }  # fmt: skip


def test_titles() -> None:
    tools = default_tools()
    assert tools["write_file"].title({"path": "main.tf", "content": ""}) == "Write main.tf"
    assert tools["read_file"].title({"path": "vars.tf"}) == "Read vars.tf"
    assert tools["grep"].title({"pattern": "aws_"}) == "Search for 'aws_'"
    assert tools["web_fetch"].title({"url": "https://x.io"}) == "Fetch https://x.io"
    assert tools["agent"].title({"task": "t", "description": "Survey modules"}) == (
        "Agent: Survey modules"
    )


@pytest.mark.anyio
async def test_agent_tool_calls_the_subagent(workspace: Path) -> None:
    calls: list[tuple[str, str]] = []

    async def run_subagent(task: str, description: str) -> str:
        calls.append((task, description))
        return "found 3 modules"

    ctx = ToolContext.for_session(workspace, run_subagent=run_subagent)
    outcome = await AgentTool().run({"task": "List modules", "description": "Survey"}, ctx)
    assert calls == [("List modules", "Survey")]
    assert outcome.model_content == "found 3 modules" and not outcome.is_error


@pytest.mark.anyio
async def test_agent_tool_errors(workspace: Path) -> None:
    unavailable = await AgentTool().run(
        {"task": "x", "description": "y"}, ToolContext.for_session(workspace)
    )
    assert unavailable.is_error and "not available" in unavailable.model_content

    async def broken(task: str, description: str) -> str:
        raise RuntimeError("model endpoint down")

    failed = await AgentTool().run(
        {"task": "x", "description": "y"}, ToolContext.for_session(workspace, run_subagent=broken)
    )
    assert failed.is_error and "model endpoint down" in failed.model_content


@pytest.mark.anyio
async def test_agent_tool_propagates_cancellation(workspace: Path) -> None:
    started = anyio.Event()
    finished: list[str] = []

    async def hangs(task: str, description: str) -> str:
        started.set()
        await anyio.sleep_forever()
        return ""

    ctx = ToolContext.for_session(workspace, run_subagent=hangs)

    async def call() -> None:
        await AgentTool().run({"task": "x", "description": "y"}, ctx)
        finished.append("returned")

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await started.wait()
            group.cancel_scope.cancel()
    assert finished == []


class _Crashing(Tool):
    name = "crash"
    kind = "other"
    description = "A tool whose implementation raises, to test the safety net."
    input_schema = {"type": "object", "properties": {}}

    def _title(self, tool_input: JsonDict) -> str:
        raise KeyError("boom")

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        raise AssertionError("unused")

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        raise OSError(5, "Input/output error")


@pytest.mark.anyio
async def test_exceptions_become_error_outcomes(workspace: Path) -> None:
    tool = _Crashing()
    outcome = await tool.run({}, ToolContext.for_session(workspace))
    assert outcome.is_error and "Input/output error" in outcome.model_content
    assert tool.title({}) == "crash"


def test_cap_text() -> None:
    assert cap_text("short", 100) == "short"
    capped = cap_text("a" * 1000, 100)
    assert len(capped) <= 100
    assert capped.endswith("more characters]")
    head_tail = cap_text("H" * 500 + "T" * 500, 120, "head_tail")
    assert len(head_tail) <= 120
    assert head_tail.startswith("H") and head_tail.endswith("T")
    assert "characters omitted" in head_tail
    assert cap_text(capped, 100) == capped  # idempotent


def test_looks_binary() -> None:
    assert looks_binary(b"abc\x00def")
    assert not looks_binary("ünïcödé text\n".encode())
    assert not looks_binary("日本語".encode()[:-1])  # cut inside a character
    assert looks_binary(bytes(range(1, 9)) * 100)
    assert not looks_binary(b"")


def test_validation_messages() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "flag": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["n"],
    }
    assert validate_input(schema, {"n": 2, "flag": False, "tags": ["a"]}) == []
    assert validate_input(schema, {"n": True}) == ["'n' must be an integer"]
    assert validate_input(schema, {"n": 0}) == ["'n' must be at least 1"]
    assert validate_input(schema, {"n": None}) == ["missing required argument 'n'"]
    assert validate_input(schema, {"n": 1, "tags": [1]}) == ["'tags'[0] must be a string"]
    assert validate_input(schema, []) == ["the tool input must be an object"]
