"""McpStdioClient against the fake MCP server over real pipes."""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from iac_code.mcp import client as mcp_client
from iac_code.mcp import server_process
from iac_code.mcp.client import (
    McpConnectionClosed,
    McpRequestError,
    McpStartError,
    McpStdioClient,
    McpTimeoutError,
)
from iac_code.mcp.config import StdioServerConfig

from tests.agent.mcp.mcp_test_kit import FAKE_TOOL_NAMES, fake_config, is_alive, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


@asynccontextmanager
async def running(
    config: StdioServerConfig, cwd: Path, logger: logging.Logger, **start: float
) -> AsyncIterator[McpStdioClient]:
    """A started client whose process is always stopped afterwards."""
    async with anyio.create_task_group() as group:
        client = McpStdioClient(config, cwd=cwd, logger=logger)
        try:
            await client.start(group, **start)
            yield client
        finally:
            await client.aclose(grace_s=0.5)


async def test_handshake_and_paged_tool_list(tmp_path: Path, mcp_logger: logging.Logger) -> None:
    with anyio.fail_after(60):
        async with running(fake_config("--page-size", "2"), tmp_path, mcp_logger) as client:
            assert client.protocol_version == "2025-06-18"
            assert client.server_info == {"name": "fake", "version": "1.0"}
            assert client.instructions == "Use echo to test."
            tools = await client.list_tools()
    assert [tool.name for tool in tools] == FAKE_TOOL_NAMES
    echo = tools[0]
    assert echo.read_only_hint is True
    assert echo.input_schema["required"] == ["text"]
    assert tools[1].title == "Add numbers"
    assert tools[4].input_schema == {}  # "picture" has no inputSchema


async def test_calls_echo_add_and_is_error(tmp_path: Path, mcp_logger: logging.Logger) -> None:
    with anyio.fail_after(60):
        async with running(fake_config(), tmp_path, mcp_logger) as client:
            echoed = await client.call_tool("echo", {"text": "héllo\nworld"})
            added = await client.call_tool("add", {"a": 2, "b": 40})
            failed = await client.call_tool("fail", {})
            with pytest.raises(McpRequestError) as refused:
                await client.call_tool("no_such_tool", {})
    assert text_of(echoed) == "héllo\nworld"
    assert text_of(added) == "42"
    assert failed["isError"] is True
    assert refused.value.code == -32602


async def test_cancelled_call_sends_notice_and_returns(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    with anyio.fail_after(60):
        async with running(fake_config(), tmp_path, mcp_logger) as client:
            with anyio.move_on_after(0.3) as scope:
                await client.call_tool("slow", {"seconds": 120})
            assert scope.cancelled_caught
            seen = json.loads(text_of(await client.call_tool("cancellations", {})))
    # Request ids count from 0 (initialize), as in the MCP SDKs: the call was the second.
    assert seen == [{"requestId": 1, "reason": "the request was cancelled"}]


async def test_timed_out_call_is_cancelled_on_the_server(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    with anyio.fail_after(60):
        async with running(fake_config(), tmp_path, mcp_logger) as client:
            with pytest.raises(McpTimeoutError):
                await client.call_tool("slow", {"seconds": 120}, timeout_s=0.2)
            seen = json.loads(text_of(await client.call_tool("cancellations", {})))
            # The connection stays usable after a timeout.
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
    assert [notice["requestId"] for notice in seen] == [1]
    assert "0.2 s" in seen[0]["reason"]


async def test_server_requests_ping_answered_others_refused(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    with anyio.fail_after(60):
        async with running(fake_config(), tmp_path, mcp_logger) as client:
            answers = json.loads(text_of(await client.call_tool("ping_client", {})))
    assert answers["s1"]["result"] == {}
    assert answers["s2"]["error"]["code"] == -32601


async def test_runs_in_cwd_with_extra_env(tmp_path: Path, mcp_logger: logging.Logger) -> None:
    config = fake_config(env=(("MCP_TEST_VALUE", "from-acp"),))
    with anyio.fail_after(60):
        async with running(config, tmp_path, mcp_logger) as client:
            where = json.loads(
                text_of(await client.call_tool("whereami", {"var": "MCP_TEST_VALUE"}))
            )
            path = json.loads(text_of(await client.call_tool("whereami", {"var": "PATH"})))
    assert where == {"cwd": str(tmp_path), "value": "from-acp"}
    assert path["value"] == os.environ["PATH"]  # the agent's own environment is inherited


async def test_stderr_goes_to_the_log(
    tmp_path: Path, mcp_logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tests.mcp")
    with anyio.fail_after(60):
        async with running(fake_config(), tmp_path, mcp_logger) as client:
            await client.list_tools()
    assert client.stderr_tail() == ["fake server starting"]
    assert "fake server starting" in caplog.text


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (StdioServerConfig("gone", "gone", "/nonexistent/mcp-server"), "could not start"),
        (fake_config("--mode", "exit"), "exited with code 3; stderr: fake server starting"),
        (fake_config("--mode", "silent"), "no answer to initialize within 0.5 s"),
    ],
    ids=["missing-command", "exits-at-once", "never-answers"],
)
async def test_start_failures_raise_and_leave_nothing_running(
    tmp_path: Path, mcp_logger: logging.Logger, config: StdioServerConfig, expected: str
) -> None:
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            client = McpStdioClient(config, cwd=tmp_path, logger=mcp_logger)
            with pytest.raises(McpStartError) as failure:
                await client.start(group, timeout_s=0.5)
    assert expected in str(failure.value)
    assert client.pid is None or not is_alive(client.pid)
    assert not client.is_open


async def test_aclose_stops_the_whole_process_group(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    with anyio.fail_after(60):
        async with running(fake_config("--spawn-child"), tmp_path, mcp_logger) as client:
            child_pid = int(text_of(await client.call_tool("child_pid", {})))
            server_pid = client.pid
            assert server_pid is not None and is_alive(child_pid)
    assert not is_alive(server_pid)
    assert not is_alive(child_pid)


async def test_a_cancel_that_lands_during_the_spawn_still_stops_the_server(
    tmp_path: Path, mcp_logger: logging.Logger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server runs from the fork on, but ``start`` holds its process only once the
    spawn's await returns. A cancel landing in between (the agent shutting down while a
    session starts its MCP servers) must still stop the server."""
    real_open_process = anyio.open_process
    group_scope: list[anyio.CancelScope] = []
    spawned: list[int] = []

    async def cancelled_while_spawning(*args: Any, **kwargs: Any) -> Any:
        process = await real_open_process(*args, **kwargs)
        spawned.append(process.pid)
        group_scope[0].cancel()  # the cancel arrives before the spawn has returned
        await anyio.lowlevel.checkpoint()
        return process

    monkeypatch.setattr(server_process.anyio, "open_process", cancelled_while_spawning)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group_scope.append(group.cancel_scope)
            client = McpStdioClient(fake_config(), cwd=tmp_path, logger=mcp_logger)
            group.start_soon(client.start, group)
    assert spawned, "the server was never spawned"
    try:
        assert not is_alive(spawned[0]), "the server outlived the cancelled start"
    finally:
        if is_alive(spawned[0]):
            os.killpg(spawned[0], signal.SIGKILL)


async def test_aclose_kills_a_server_that_ignores_sigterm(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    config = fake_config("--stubborn", "--spawn-child")
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            client = McpStdioClient(config, cwd=tmp_path, logger=mcp_logger)
            await client.start(group)
            child_pid = int(text_of(await client.call_tool("child_pid", {})))
            server_pid = client.pid
            await client.aclose(grace_s=0.2)
            await client.aclose(grace_s=0.2)  # idempotent
    assert client.returncode == -signal.SIGKILL
    assert server_pid is not None and not is_alive(server_pid)
    assert not is_alive(child_pid)


async def test_calls_fail_cleanly_once_the_server_died(
    tmp_path: Path, mcp_logger: logging.Logger
) -> None:
    with anyio.fail_after(60):
        async with running(fake_config(), tmp_path, mcp_logger) as client:
            assert client.pid is not None
            os.kill(client.pid, signal.SIGKILL)
            with pytest.raises(McpConnectionClosed):
                await client.call_tool("slow", {"seconds": 120})
            with pytest.raises(McpConnectionClosed):
                await client.call_tool("echo", {"text": "x"})
            assert not client.is_open


async def test_output_that_is_no_message_is_logged_not_answered(
    tmp_path: Path, mcp_logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    """A server printing logs (or an endless line) on stdout gets no error answers back."""
    caplog.set_level(logging.WARNING, logger="tests.mcp")
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            client = McpStdioClient(
                fake_config(), cwd=tmp_path, logger=mcp_logger, max_line_bytes=1024
            )
            try:
                await client.start(group)
                noisy = await client.call_tool("noise", {"bytes": 4096})
                answers = json.loads(text_of(await client.call_tool("answers", {})))
                still = await client.call_tool("echo", {"text": "still here"})
            finally:
                await client.aclose(grace_s=0.5)
    assert text_of(noisy) == "after the noise"
    assert answers == {}  # nothing was sent back for the three bad lines
    assert text_of(still) == "still here"
    ignored = [r.getMessage() for r in caplog.records if "no message" in r.getMessage()]
    assert len(ignored) == 3, ignored
    assert any("invalid JSON" in text for text in ignored)


async def test_a_server_that_stops_reading_its_input_is_closed(
    tmp_path: Path, mcp_logger: logging.Logger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_client, "WRITE_TIMEOUT_S", 0.3)
    with anyio.fail_after(60):
        async with running(fake_config(), tmp_path, mcp_logger) as client:
            await client.call_tool("deaf", {})
            # More than a pipe buffer holds: the write cannot finish while nobody reads.
            with pytest.raises(McpConnectionClosed, match="stopped reading its input"):
                await client.call_tool("echo", {"text": "x" * 1_000_000}, timeout_s=10)
            assert not client.is_open
            with pytest.raises(McpConnectionClosed, match="stopped reading its input"):
                await client.call_tool("echo", {"text": "x"})
