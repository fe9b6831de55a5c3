"""The official TypeScript SDK 2.4.0's v2 client (the newest draft) against ``iac-code acp``.

Recipe of the issue-35 closing note: a v2 turn driven by the SDK's own client through a
``tool_call/cancel``. The SDK parses what it receives with the zod schemas generated from its
v2 schema, so a shape of ours it disagrees with fails the run. Real agent process over stdio,
scripted model over HTTP; the node client bounds itself (60 s) and the test bounds it again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code_dev.wire_client.ndjson_pipes import agent_command

from tests.agent.process.stdio_harness import agent_environment, write_fast_retry_config
from tests.agent.protocol_v2.v2_script import FINAL_TEXT, LONG_BASH, LONG_BASH_COMMAND

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

HERE = Path(__file__).parent


def _route(body: dict[str, Any]) -> Turn:
    messages = body.get("messages") or []
    last = messages[-1].get("content") if messages else None
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return Turn().text(FINAL_TEXT, chunks=2)
    return Turn().tool_use("bash", {"command": LONG_BASH_COMMAND}, id="ts_bash")


@pytest.fixture(scope="module")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(_route) as server:
        yield server


async def test_the_official_v2_client_stops_one_tool_call_and_the_turn_goes_on(
    node: str, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    write_fast_retry_config(home)
    command = [node, "v2_tool_cancel.mjs", str(workspace), f"{LONG_BASH} run it", "--"]
    command += agent_command()
    with anyio.fail_after(90):
        done = await anyio.run_process(
            command, cwd=HERE, env=agent_environment(home, llm_server.url), check=False
        )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    summary = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert summary["protocolVersion"] == 2 and summary["messageId"]
    assert summary["cancelAnswer"] == {}
    assert summary["finalStatus"] == "cancelled"
    assert summary["stopReason"] == "end_turn"
    assert FINAL_TEXT in summary["text"]
