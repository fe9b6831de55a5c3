"""McpSessionServers: background start, skipping bad servers, tools, shutdown."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import anyio
import pytest
from iac_code.mcp.manager import McpSessionServers
from iac_code.tools.contract import ToolContext

from tests.agent.mcp.mcp_test_kit import fake_entry, is_alive, live_processes_with_env

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


async def test_good_servers_ready_bad_ones_skipped_with_warnings(
    tmp_path: Path, mcp_logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    entries = [
        fake_entry("fake"),
        {"name": "missing", "command": "/nonexistent/mcp-server", "args": [], "env": []},
        fake_entry("crashes", "--mode", "exit"),
        fake_entry("mute", "--mode", "silent"),
        {"type": "http", "name": "remote", "url": "https://example.com/mcp", "headers": []},
        fake_entry("other.server", "--page-size", "4"),
    ]
    caplog.set_level(logging.WARNING, logger="tests.mcp")
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            servers = await McpSessionServers.start(
                entries, tmp_path, logger=mcp_logger, task_group=group, start_timeout_s=1.0
            )
            assert not servers.is_ready  # start() only schedules the work
            assert await servers.ready(15)
            tools = servers.tools()
            status = {entry["name"]: entry for entry in servers.describe()}
            pids = [entry["pid"] for entry in status.values() if entry["pid"] is not None]
            ctx = ToolContext.for_session(tmp_path)
            echoed = await tools["mcp__fake__echo"].run({"text": "hi"}, ctx)
            added = await tools["mcp__other_server__add"].run({"a": 1, "b": 2}, ctx)
            failed = await tools["mcp__fake__fail"].run({}, ctx)
            assert servers.instructions() == {
                "fake": "Use echo to test.",
                "other.server": "Use echo to test.",
            }
            await servers.aclose()
            await servers.aclose()  # idempotent
    assert len(tools) == 18
    assert {name for name in tools if name.startswith("mcp__fake__")} >= {
        "mcp__fake__echo",
        "mcp__fake__slow",
    }
    assert tools["mcp__other_server__add"].title({"a": 1, "b": 2}) == "other.server: Add numbers"
    assert [status[name]["status"] for name in ("fake", "other.server")] == ["ready", "ready"]
    after = {entry["name"]: entry["status"] for entry in servers.describe()}
    assert after["fake"] == after["other.server"] == "closed"
    assert [status[name]["status"] for name in ("missing", "crashes", "mute")] == ["failed"] * 3
    assert "remote" not in status
    assert "exited with code 3" in status["crashes"]["error"]
    assert "no answer to initialize" in status["mute"]["error"]
    assert echoed.model_content == "hi" and not echoed.is_error
    assert added.model_content == "3"
    assert failed.is_error and failed.model_content == "something went wrong"
    assert pids and not any(is_alive(pid) for pid in pids)
    warnings = caplog.text
    for name in ("missing", "crashes", "mute", "remote"):
        assert repr(name) in warnings


async def test_tools_of_a_closed_session_report_unavailable(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            servers = await McpSessionServers.start(
                [fake_entry()], tmp_path, logger=mcp_logger, task_group=group
            )
            assert await servers.ready(10)
            echo = servers.tools()["mcp__fake__echo"]
            await servers.aclose()
            outcome = await echo.run({"text": "late"}, ToolContext.for_session(tmp_path))
    assert outcome.is_error and "is not available" in outcome.model_content


async def test_cancelling_a_running_call_through_the_tool(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            servers = await McpSessionServers.start(
                [fake_entry()], tmp_path, logger=mcp_logger, task_group=group
            )
            assert await servers.ready(10)
            tools = servers.tools()
            ctx = ToolContext.for_session(tmp_path)
            with anyio.move_on_after(0.3) as scope:
                await tools["mcp__fake__slow"].run({"seconds": 120}, ctx)
            seen = await tools["mcp__fake__cancellations"].run({}, ctx)
            await servers.aclose()
    assert scope.cancelled_caught
    assert '"reason": "the request was cancelled"' in seen.model_content


async def test_aclose_while_servers_are_still_starting(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    # The process may or may not have been spawned yet when aclose comes; either way none
    # may survive, so look for it by a marker in its environment.
    marker = f"MCP_TEST_MARKER=mute-{uuid.uuid4().hex}"
    name, value = marker.split("=")
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            servers = await McpSessionServers.start(
                [fake_entry("mute", "--mode", "silent", env={name: value})],
                tmp_path,
                logger=mcp_logger,
                task_group=group,
                start_timeout_s=60,
            )
            assert not await servers.ready(0.3)
            await servers.aclose()
            assert servers.is_ready
    assert live_processes_with_env(marker) == []
    assert servers.describe()[0]["status"] == "closed"
    assert servers.tools() == {}


async def test_cancelled_task_group_still_stops_the_servers(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            servers = await McpSessionServers.start(
                [fake_entry("a", "--spawn-child"), fake_entry("b")],
                tmp_path,
                logger=mcp_logger,
                task_group=group,
            )
            assert await servers.ready(10)
            child = await servers.tools()["mcp__a__child_pid"].run(
                {}, ToolContext.for_session(tmp_path)
            )
            pids = [entry["pid"] for entry in servers.describe()]
            group.cancel_scope.cancel()  # the agent shuts down without closing the session
    assert len(pids) == 2
    assert not any(is_alive(pid) for pid in [*pids, int(child.model_content)])


async def test_no_servers_is_ready_at_once(tmp_path: Path, mcp_logger: logging.Logger) -> None:
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            servers = await McpSessionServers.start(
                None, tmp_path, logger=mcp_logger, task_group=group
            )
            assert servers.is_ready
            assert await servers.ready(0)
            assert servers.tools() == {} and servers.describe() == []
            await servers.aclose()
