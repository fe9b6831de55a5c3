"""A v1 session's ``session/update`` notifications never pass through the v2 package.

The agent sends through :class:`~iac_code.negotiated_peer.NegotiatedPeer`, which hands a v1
connection's messages straight to the connection. Checked in a fresh interpreter, so no
other test has imported v2 code first: during a v1 prompt no function of ``iac_code.v2`` or
``acp_bindings.v2`` is called, and afterwards none of their modules is even imported. The
same agent, once a client negotiates v2, does send through the v2 rewriter (the control).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[3]

PROBE = textwrap.dedent(
    """
    import json, sys, tempfile
    from pathlib import Path

    import anyio

    import iac_code.stdio_runtime  # noqa: F401  (the entry module of `iac-code acp`)
    from tests.agent.protocol_v2.versioned_agent import open_versioned_agent

    VERSION = int(sys.argv[1])
    V2_INIT = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}
    called = set()

    def profile(frame, event, arg):
        if event == "call":
            called.add(frame.f_globals.get("__name__") or "")

    def is_v2(name):
        return name.startswith(("iac_code.v2", "acp_bindings.v2"))

    async def main():
        with tempfile.TemporaryDirectory() as tmp:
            async with open_versioned_agent(Path(tmp), ["hello from the model"]) as client:
                if VERSION == 1:
                    await client.initialize()
                    session_id = await client.new_session()
                    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
                else:
                    await client.call("initialize", V2_INIT)
                    new = await client.call("session/new", {"cwd": str(client.workspace)})
                    session_id = new.result["sessionId"]
                    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
                sys.setprofile(profile)
                try:
                    request = await client.send("session/prompt", prompt)
                    await client.reply(request)
                    # A v2 turn first imports the model SDK in a thread (seconds on a loaded
                    # machine, more under the profiler): a generous bound, never a sleep.
                    await client.wire.wait_update("agent_message_chunk", wait_s=60)
                finally:
                    sys.setprofile(None)
                updates = [f for f in client.received if f.get("method") == "session/update"]
        print(json.dumps({
            "updates": len(updates),
            "v2_called": sorted(n for n in called if is_v2(n)),
            "v2_imported": sorted(n for n in sys.modules if is_v2(n)),
        }))

    anyio.run(main)
    """
)


def _probe(version: int) -> dict[str, object]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, str(version)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, object] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def test_a_v1_prompt_calls_and_imports_no_v2_code() -> None:
    result = _probe(1)
    assert result["updates"]
    assert result["v2_called"] == []
    assert result["v2_imported"] == []


def test_a_v2_prompt_goes_through_the_v2_rewriter() -> None:
    result = _probe(2)
    assert result["updates"]
    assert "iac_code.v2.rewriter" in result["v2_called"]  # type: ignore[operator]
