"""McpTool: naming, the tool contract, permissions, and result conversion (no processes)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from iac_code.mcp.client import (
    McpConnectionClosed,
    McpRequestError,
    McpTimeoutError,
    McpToolInfo,
)
from iac_code.mcp.config import parse_server_configs
from iac_code.mcp.content import outcome_from_result
from iac_code.mcp.naming import MAX_TOOL_NAME, unique_server_label, unique_tool_name
from iac_code.mcp.tools import McpTool, build_mcp_tool
from iac_code.tools.contract import AccessKind, ToolContext
from iac_code.tools.permissions import (
    MODE_ACCEPT_EDITS,
    MODE_DEFAULT,
    MODE_READ_ONLY,
    Action,
    PermissionMemory,
    decide,
)


class ScriptedCaller:
    """Answers tools/call with a fixed result (or raises), recording the calls."""

    def __init__(self, result: dict[str, Any] | None = None, error: Exception | None = None):
        self.result = result or {"content": []}
        self.error = error
        self.calls: list[tuple[str, dict[str, Any], float | None]] = []

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout_s: float | None = None
    ) -> dict[str, Any]:
        self.calls.append((name, arguments, timeout_s))
        if self.error is not None:
            raise self.error
        return self.result


def make_tool(
    caller: ScriptedCaller | None = None, *, server: str = "files", **info: Any
) -> McpTool:
    fields: dict[str, Any] = {"name": "read", "description": "Read a thing.", "input_schema": {}}
    fields.update(info)
    return build_mcp_tool(server, server, McpToolInfo(**fields), caller or ScriptedCaller())


def context(tmp_path: Path, **limits: Any) -> ToolContext:
    return ToolContext.for_session(tmp_path).with_limits(**limits)


# --- names -----------------------------------------------------------------------------------


def test_tool_names_are_sanitised_and_prefixed() -> None:
    assert unique_tool_name("git", "log", set()) == "mcp__git__log"
    assert unique_tool_name("git", "repo.log/all", set()) == "mcp__git__repo_log_all"
    assert unique_tool_name("git", "日本", set()) == "mcp__git__tool"
    assert unique_server_label("my server!", set()) == "my_server_"


def test_colliding_names_get_distinct_suffixes() -> None:
    taken: set[str] = set()
    names = []
    for tool in ("a.b", "a_b", "a b"):
        names.append(unique_tool_name("s", tool, taken))
        taken.add(names[-1])
    assert names == ["mcp__s__a_b", "mcp__s__a_b_2", "mcp__s__a_b_3"]
    assert unique_server_label("fs", {"fs"}) == "fs_2"


def test_long_names_fit_and_stay_stable() -> None:
    first = unique_tool_name("server", "x" * 100 + "one", set())
    second = unique_tool_name("server", "x" * 100 + "two", set())
    assert len(first) == len(second) == MAX_TOOL_NAME
    assert first != second
    assert first == unique_tool_name("server", "x" * 100 + "one", set())  # same every run
    crowded = unique_tool_name("server", "x" * 100 + "one", {first})
    assert len(crowded) <= MAX_TOOL_NAME and crowded != first
    assert len(unique_server_label("s" * 80, set())) <= 24


def test_configs_keep_stdio_skip_others_and_label_uniquely(
    caplog: pytest.LogCaptureFixture,
) -> None:
    entries = [
        {"name": "fs", "command": "fs-server", "args": ["--root", "/"], "env": []},
        {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []},
        {"type": "sse", "name": "events", "url": "https://example.com/sse", "headers": []},
        {"name": "fs", "command": "other", "env": [{"name": "TOKEN", "value": "t"}]},
        {"name": "broken"},
        "not an object",
    ]
    with caplog.at_level(logging.WARNING):
        configs = parse_server_configs(entries, logging.getLogger("tests.mcp"))
    assert [(c.name, c.label, c.command) for c in configs] == [
        ("fs", "fs", "fs-server"),
        ("fs", "fs_2", "other"),
    ]
    assert configs[0].args == ("--root", "/")
    assert configs[1].env == (("TOKEN", "t"),)
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 4
    assert any("http transport is not supported" in text for text in warnings)
    assert any("sse transport is not supported" in text for text in warnings)


# --- the tool contract -----------------------------------------------------------------------


def test_tool_attributes() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tool = make_tool(name="read.file", title="Read file", input_schema=schema)
    assert tool.name == "mcp__files__read_file"
    assert tool.kind == "other" and tool.read_only is False
    assert tool.description == "[MCP server files] Read a thing."
    assert tool.input_schema == schema
    assert tool.title({"path": "x"}) == "files: Read file"
    assert tool.spec()["name"] == "mcp__files__read_file"
    assert make_tool().input_schema == {"type": "object"}
    hinted = make_tool(annotations={"readOnlyHint": True})
    assert hinted.kind == "read" and hinted.read_only is True


def test_schema_without_type_becomes_an_object_schema() -> None:
    tool = make_tool(input_schema={"properties": {"q": {"type": "string"}}})
    assert tool.input_schema == {"type": "object", "properties": {"q": {"type": "string"}}}
    assert make_tool(input_schema={"type": "string"}).input_schema == {"type": "object"}


@pytest.mark.anyio
@pytest.mark.parametrize("hint", [False, True])
async def test_access_is_execute_and_the_policy_asks(tmp_path: Path, hint: bool) -> None:
    tool = make_tool(annotations={"readOnlyHint": hint})
    access = await tool.access({}, context(tmp_path))
    assert access.kind is AccessKind.EXECUTE
    assert not access.restricted
    assert decide(tool, access, MODE_DEFAULT).action is Action.ASK
    assert decide(tool, access, MODE_ACCEPT_EDITS).action is Action.ASK
    assert decide(tool, access, MODE_READ_ONLY).action is Action.DENY
    memory = PermissionMemory()
    memory.remember(tool.name, "allow_always")
    assert decide(tool, access, MODE_DEFAULT, memory).action is Action.ALLOW
    assert decide(make_tool(name="other"), access, MODE_DEFAULT, memory).action is Action.ASK


@pytest.mark.anyio
async def test_run_passes_arguments_and_converts_text(tmp_path: Path) -> None:
    caller = ScriptedCaller(
        {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}
    )
    tool = make_tool(caller, input_schema={"type": "object", "required": ["path"]})
    with anyio.fail_after(60):
        outcome = await tool.run({"path": "a"}, context(tmp_path))
        invalid = await tool.run({}, context(tmp_path))
    assert caller.calls == [("read", {"path": "a"}, 600.0)]
    assert outcome.model_content == "one\ntwo"
    assert not outcome.is_error
    assert [item["content"]["text"] for item in outcome.content] == ["one", "two"]
    assert outcome.raw_output == caller.result
    assert invalid.is_error and "missing required argument 'path'" in invalid.model_content


@pytest.mark.anyio
async def test_unusual_schemas_do_not_block_calls(tmp_path: Path) -> None:
    tool = make_tool(input_schema={"type": "object", "properties": "not a mapping"})
    with anyio.fail_after(60):
        outcome = await tool.run({"x": 1}, context(tmp_path))
        not_object = await tool.run([1], context(tmp_path))
    assert not outcome.is_error
    assert not_object.is_error


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (McpTimeoutError("late"), "did not answer within 600 s"),
        (McpRequestError(-32602, "bad arguments"), "failed: bad arguments"),
        (McpConnectionClosed("the server closed its output"), "is not available"),
    ],
)
async def test_client_errors_become_error_outcomes(
    tmp_path: Path, error: Exception, expected: str
) -> None:
    tool = make_tool(ScriptedCaller(error=error))
    with anyio.fail_after(60):
        outcome = await tool.run({}, context(tmp_path))
    assert outcome.is_error
    assert expected in outcome.model_content
    assert "'read' of server 'files'" in outcome.model_content


@pytest.mark.anyio
async def test_is_error_result_is_an_error_outcome(tmp_path: Path) -> None:
    result = {"content": [{"type": "text", "text": "disk full"}], "isError": True}
    with anyio.fail_after(60):
        outcome = await make_tool(ScriptedCaller(result)).run({}, context(tmp_path))
    assert outcome.is_error
    assert outcome.model_content == "disk full"
    assert outcome.raw_output == result


@pytest.mark.anyio
async def test_results_are_capped_for_model_and_client(tmp_path: Path) -> None:
    result = {"content": [{"type": "text", "text": "x" * 5000}]}
    with anyio.fail_after(60):
        outcome = await make_tool(ScriptedCaller(result)).run(
            {}, context(tmp_path, result_cap_chars=500)
        )
    assert len(outcome.model_content) <= 500
    assert "output truncated" in outcome.model_content
    assert len(outcome.content[0]["content"]["text"]) <= 500


# --- content conversion ----------------------------------------------------------------------


def test_images_resources_and_links() -> None:
    result = {
        "content": [
            {"type": "image", "data": "AAAA", "mimeType": "image/png", "extra": 1},
            {"type": "audio", "data": "BBBB", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.tf", "name": "a.tf", "size": 3},
            {"type": "resource", "resource": {"uri": "file:///b.tf", "text": "x = 1"}},
            {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "AAAA"}},
            {"type": "video"},
        ]
    }
    outcome = outcome_from_result(result, cap=10_000)
    assert outcome.model_content.splitlines() == [
        "[image: image/png]",
        "[audio: audio/wav]",
        "[resource link: a.tf <file:///a.tf>]",
        "[resource file:///b.tf]",
        "x = 1",
        "[binary resource file:///c.bin (unknown type), 4 base64 characters]",
        "[unsupported content type 'video']",
    ]
    assert [item["content"] for item in outcome.content] == [
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "audio", "data": "BBBB", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///a.tf", "name": "a.tf", "size": 3},
        {"type": "resource", "resource": {"uri": "file:///b.tf", "text": "x = 1"}},
        {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "AAAA"}},
    ]
    assert all(item["type"] == "content" for item in outcome.content)


def test_structured_only_and_empty_results() -> None:
    structured = outcome_from_result({"content": [], "structuredContent": {"n": 1}}, cap=1000)
    assert structured.model_content == '{\n  "n": 1\n}'
    empty = outcome_from_result({"content": []}, cap=1000)
    assert empty.model_content == "(no output)" and not empty.is_error
    failed = outcome_from_result({"isError": True}, cap=1000)
    assert failed.is_error and failed.model_content == "The tool reported an error."
    assert failed.content[0]["content"]["text"] == "The tool reported an error."
