"""The proxy between a real client (the official Python SDK's) and an agent double seeded with
an ordering defect (a ``session/update`` before the ``session/new`` result): the session goes
on, and the proxy's live log and report name the defect. The test prints the log excerpt."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from acp import PROTOCOL_VERSION, Client
from acp.schema import ClientCapabilities, Implementation
from acp.stdio import spawn_agent_process

from tests.checker.proxy.proxy_support import raw_agent

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.subprocess]


class QuietClient:
    """An editor that only takes session updates."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def test_the_proxy_catches_an_update_before_the_session_new_result(tmp_path: Path) -> None:
    report, log = tmp_path / "report.json", tmp_path / "findings.log"
    proxy = ["-m", "acp_conformance.cli", "proxy", "--report-json", str(report)]
    proxy += ["--log", str(log), "--", *raw_agent("--defect", "update-before-session-id")]
    with anyio.fail_after(60):
        async with spawn_agent_process(
            cast(Client, QuietClient()),
            sys.executable,
            *proxy,
            transport_kwargs={"stderr": asyncio.subprocess.DEVNULL, "shutdown_timeout": 20.0},
        ) as (connection, _process):
            await connection.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="proxy-transcript", version="0"),
            )
            session = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
            assert session.session_id  # the defect is reported, the session goes on
    # The SDK waited for the proxy to exit, and the proxy waits for its judge's reports.
    data = json.loads(report.read_text(encoding="utf-8"))
    rules = [f["rule"] for f in data["findings"]]
    assert "prompt.updates-after-session-handed-out" in rules
    excerpt = log.read_text(encoding="utf-8")
    assert "prompt.updates-after-session-handed-out" in excerpt
    print("\n--- proxy log ---\n" + excerpt)
