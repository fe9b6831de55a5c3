"""The trace goes on to MCP servers: ``tools/call`` carries ``traceparent`` in its ``_meta``.

Checked on the wire, with the fake MCP server over real pipes: its unlisted ``meta`` tool
answers the ``_meta`` of its own call.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import anyio
import pytest
from iac_code import telemetry
from iac_code.mcp.client import McpStdioClient

from tests.agent.mcp.mcp_test_kit import fake_config, text_of
from tests.agent.telemetry.telemetry_kit import recording

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

LOG = logging.getLogger("tests.telemetry.mcp")


async def meta_of_a_call(cwd: Path) -> object:
    """``tools/call`` of the fake server's ``meta`` tool inside a tool-call span, if any."""
    async with anyio.create_task_group() as group:
        client = McpStdioClient(fake_config(), cwd=cwd, logger=LOG)
        try:
            await client.start(group)
            with telemetry.tool_call("mcp__fake__meta", "call-1", {}):
                return json.loads(text_of(await client.call_tool("meta", {})))
        finally:
            await client.aclose(grace_s=0.5)


async def test_tools_call_carries_the_tool_calls_trace(tmp_path: Path) -> None:
    with recording() as recorded:
        meta = await meta_of_a_call(tmp_path)
    span = recorded.one("execute_tool")
    assert span.name == "execute_tool mcp__fake__meta"
    assert dict(span.attributes or {})["gen_ai.tool.type"] == "extension"
    trace_id = format(span.context.trace_id, "032x")
    span_id = format(span.context.span_id, "016x")
    assert isinstance(meta, dict) and set(meta) == {"traceparent"}
    version, sent_trace, sent_span, flags = meta["traceparent"].split("-")
    assert (version, sent_trace, sent_span) == ("00", trace_id, span_id)
    assert int(flags, 16) & 1  # sampled


async def test_without_telemetry_tools_call_has_no_meta(tmp_path: Path) -> None:
    assert telemetry.recorder() is telemetry.NOOP
    assert await meta_of_a_call(tmp_path) is None
