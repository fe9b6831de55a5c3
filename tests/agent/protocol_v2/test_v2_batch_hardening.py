"""Issue 34 items 5 and 6 on a real ``iac-code acp`` (v2): a huge batch is refused with one
clear error while the agent's peak memory stays bounded (VmHWM from /proc), and a batch that
prompts and then closes (or deletes) the same session is answered at once, with nothing sent
for that session after the close's answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn

from tests.agent.process.stdio_harness import BlockingAgent, spawn
from tests.agent.process.test_integration_unread_output import memory_mib
from tests.agent.protocol_v2.v2_kit_support import MODEL_WAIT, session_updates, start_v2

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc"),
]

#: Generous: the refused lines are buffered once as bytes (13 and 40 MiB) before the check.
PEAK_OVER_BASELINE_MIB = 200


def _next_reply(agent: BlockingAgent, timeout: float = MODEL_WAIT) -> Any:
    while True:
        frame = agent.next_frame(timeout=timeout)
        if isinstance(frame, dict) and "method" in frame:
            continue
        return frame


def _batch_line(count: int) -> bytes:
    entries = [{"jsonrpc": "2.0", "id": n, "method": "session/list"} for n in range(count)]
    return json.dumps(entries, separators=(",", ":")).encode()


def test_huge_batches_are_refused_with_bounded_memory(home: Path) -> None:
    with ScriptedLLMServer(Turn().text("unused").to_dict()) as llm, spawn(home, llm.url) as agent:
        start_v2(agent)
        assert agent.call("session/list", {}).result["sessions"] == []
        baseline = memory_mib(agent.pid)["VmHWM"]
        refused = []
        # 300,000 requests in 13 MB (2 GiB before), then a 40 MiB line (5 GiB before).
        for count in (300_000, 900_000):
            agent.send_raw(_batch_line(count))
            refused.append(_next_reply(agent))
            peak = memory_mib(agent.pid)["VmHWM"]
            assert peak <= baseline + PEAK_OVER_BASELINE_MIB, (
                f"VmHWM {peak:.0f} MiB after a {count}-entry batch (baseline {baseline:.0f} MiB)"
            )
        # Small enough in bytes, too many entries: refused after decoding, nothing runs.
        agent.send_raw(_batch_line(1001))
        too_many = _next_reply(agent)
        agent.send_raw(_batch_line(1000))
        largest = _next_reply(agent)
        assert agent.call("session/list", {}).result["sessions"] == []  # still up
    for error in refused:
        assert isinstance(error, dict) and error["id"] is None
        assert error["error"]["code"] == -32600 and "maxBatchBytes" in error["error"]["data"]
    assert too_many["id"] is None and too_many["error"]["data"]["maxBatchEntries"] == 1000
    assert isinstance(largest, list) and [a["id"] for a in largest] == list(range(1000))


@pytest.mark.parametrize("ending", ["session/close", "session/delete"])
def test_a_prompt_then_close_in_one_batch_sends_nothing_after_the_close(
    home: Path, workspace: Path, ending: str
) -> None:
    with ScriptedLLMServer(Turn().text("should not run").to_dict()) as llm:
        with spawn(home, llm.url) as agent:
            start_v2(agent)
            session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
            batch = [
                {"jsonrpc": "2.0", "id": "p", "method": "session/prompt", "params": prompt},
                {
                    "jsonrpc": "2.0",
                    "id": "c",
                    "method": ending,
                    "params": {"sessionId": session_id},
                },
            ]
            sent_at = len(agent.frames)
            agent.send_raw(json.dumps(batch).encode())
            answer = _next_reply(agent)
            answered_at = agent.frames.index(answer, sent_at)
            # Everything the agent sends later follows this answer on the wire.
            listed = agent.call("session/list", {})
            frames = list(agent.frames)
        assert llm.model_requests == []  # the withdrawn turn never reached the model
    assert isinstance(answer, list) and [a["id"] for a in answer] == ["p", "c"]
    assert "messageId" in answer[0]["result"] and answer[1]["result"] == {}
    assert listed.result is not None
    later = [u for i, u in session_updates(frames, session_id) if i > answered_at]
    assert later == []
