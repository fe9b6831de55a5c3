"""Issue 34 items 5 and 6, in memory: a batch's entries run in order, one after another, and
its answers come in entry order; a batch over its byte, entry or answer limits is refused
with one clear error. Raw NDJSON peer over in-memory streams, every wait bounded."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from acp_bindings.errors import MethodNotFoundError
from iac_code.rpc import RequestContext

from tests.agent.rpc.test_rpc_batches import serving

pytestmark = pytest.mark.anyio

V = {"jsonrpc": "2.0"}


class Recorder:
    """Logs when each request starts and ends; ``hold`` waits for ``release``."""

    def __init__(self) -> None:
        self.log: list[tuple[str, object]] = []
        self.held = anyio.Event()
        self.release = anyio.Event()

    async def handle_request(self, ctx: RequestContext, method: str, params: Any) -> object:
        self.log.append(("start", ctx.request_id))
        if method == "hold":
            self.held.set()
            await self.release.wait()
        elif method != "step":
            raise MethodNotFoundError(data={"method": method})
        await anyio.lowlevel.checkpoint()  # a concurrent entry would start here
        self.log.append(("end", ctx.request_id))
        return {"params": params}

    async def handle_notification(self, method: str, params: object) -> None:
        self.log.append(("note", method))


def call(request_id: object, method: str, params: object = None) -> dict[str, Any]:
    return {**V, "id": request_id, "method": method, "params": params}


async def test_entries_run_one_after_another_in_their_order() -> None:
    recorder = Recorder()
    async with serving(recorder) as (_, peer):
        batch = [call(1, "step"), {**V, "method": "note/x"}, call(2, "step"), call(3, "step")]
        await peer.send(batch)
        answer = await peer.receive()
    assert recorder.log == [
        ("start", 1),
        ("end", 1),
        ("note", "note/x"),
        ("start", 2),
        ("end", 2),
        ("start", 3),
        ("end", 3),
    ]
    assert [item["id"] for item in answer] == [1, 2, 3]  # entry order, not finishing order


async def test_a_later_entry_waits_for_the_earlier_one() -> None:
    recorder = Recorder()
    async with serving(recorder) as (_, peer):
        await peer.send([call("a", "hold"), call("b", "step")])
        await recorder.held.wait()
        # Other input is still read meanwhile: a single request is answered at once.
        await peer.send(call("single", "step"))
        single = await peer.receive()
        assert ("start", "b") not in recorder.log
        recorder.release.set()
        answer = await peer.receive()
    assert single["id"] == "single"
    assert [item["id"] for item in answer] == ["a", "b"]


async def test_a_batch_over_the_entry_limit_runs_nothing() -> None:
    recorder = Recorder()
    async with serving(recorder, max_batch_entries=3) as (_, peer):
        await peer.send([call(n, "step") for n in range(4)])
        refused = await peer.receive()
        await peer.send([call(n, "step") for n in range(3)])
        accepted = await peer.receive()
    assert isinstance(refused, dict) and refused["id"] is None
    assert refused["error"]["code"] == -32600
    assert refused["error"]["data"]["maxBatchEntries"] == 3
    assert "4 entries" in refused["error"]["data"]["reason"]
    assert [item["id"] for item in accepted] == [0, 1, 2]
    assert [entry for entry in recorder.log if entry[0] == "start"] == [
        ("start", n) for n in range(3)
    ]


@pytest.mark.parametrize("batches", [True, False], ids=["v2", "v1"])
async def test_an_array_line_over_the_byte_limit_is_refused_undecoded(batches: bool) -> None:
    recorder = Recorder()
    async with serving(recorder, max_batch_bytes=200, batches=batches) as (_, peer):
        line = json.dumps([call(n, "step", {"t": "x" * 20}) for n in range(5)]).encode()
        assert len(line) > 200
        await peer.send_bytes(line + b"\n")
        refused = await peer.receive()
        # A single message of the same size is no batch: the byte limit is not its business.
        await peer.send(call("big", "step", {"t": "y" * 400}))
        single = await peer.receive()
    assert refused["id"] is None and refused["error"]["code"] == -32600
    if batches:
        assert refused["error"]["data"]["maxBatchBytes"] == 200
    assert single["id"] == "big" and "result" in single
    assert ("start", 0) not in recorder.log


async def test_answers_past_the_batch_budget_become_short_errors() -> None:
    recorder = Recorder()
    async with serving(recorder, max_batch_answer_bytes=400) as (_, peer):
        await peer.send([call(n, "step", {"t": "z" * 100}) for n in range(3)])
        answer = await peer.receive()
    assert [item["id"] for item in answer] == [0, 1, 2]
    assert "result" in answer[0] and "result" in answer[1]
    assert answer[2]["error"]["code"] == -32603
    assert answer[2]["error"]["data"] == {"maxBatchAnswerBytes": 400}
