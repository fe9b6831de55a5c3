"""The WebSocket server declines permessage-deflate unless ``--ws-compression`` is given (a real
``iac-code acp --transport http`` process; the client offers compression as browsers and the
``websockets`` library do by default)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer
from websockets.asyncio.client import connect

from tests.agent.remote.remote_kit import INIT, TIMEOUT, announced_url

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


@pytest.mark.parametrize(("flags", "compressed"), [([], False), (["--ws-compression"], True)])
async def test_compression_is_declined_unless_asked_for(
    tmp_path: Path, llm_server: ScriptedLLMServer, flags: list[str], compressed: bool
) -> None:
    env = {
        **os.environ,
        "IAC_CODE_HOME": str(tmp_path / "home"),
        "ANTHROPIC_BASE_URL": llm_server.url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    command = [sys.executable, "-m", "iac_code.cli", "acp", "--transport", "http", "--port", "0"]
    async with await anyio.open_process([*command, *flags], env=env, cwd=ROOT) as process:
        assert process.stderr is not None
        url = (await announced_url(process.stderr)).replace("http://", "ws://", 1)
        with anyio.fail_after(TIMEOUT):
            async with connect(url) as socket:  # offers permessage-deflate
                assert socket.response is not None
                agreed = socket.response.headers.get("sec-websocket-extensions") or ""
                assert ("permessage-deflate" in agreed) is compressed
                await socket.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                              "params": INIT}))  # fmt: skip
                answer = json.loads(await socket.recv())
                assert answer["id"] == 1 and "result" in answer
        process.terminate()
        with anyio.fail_after(TIMEOUT):
            await process.wait()
