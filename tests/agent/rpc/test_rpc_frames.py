"""Every frame the connection writes carries its routing facts (issue 37, item 4): what it
is, which request it answers or is, and which session it names; the HTTP/WebSocket
transports route on these and never parse the bytes."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from iac_code.rpc.channels import FrameSink, MessageQueue
from iac_code.rpc.connection import Connection
from iac_code.rpc.context import RequestContext
from iac_code.rpc.frames import ANSWER, BATCH, NOTIFICATION, REQUEST, Frame

pytestmark = pytest.mark.anyio


class RecordingSink(FrameSink):
    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.arrived = anyio.Event()
        self.expected = 0

    async def send_frames(self, frames: list[Frame]) -> None:
        self.frames.extend(frames)
        if len(self.frames) >= self.expected:
            self.arrived.set()

    async def aclose(self) -> None:
        pass


class Handler:
    def __init__(self) -> None:
        self.connection: Connection | None = None

    async def handle_request(self, ctx: RequestContext, method: str, params: object) -> object:
        assert self.connection is not None
        if method == "work":
            await self.connection.send_notification(
                "session/update", {"update": {"sessionUpdate": "x"}, "sessionId": "s-1"}
            )
            await self.connection.send_notification("note", {"sessionId": 7})  # not a str
            call = await self.connection.start_request("ask", {"sessionId": "s-2"})
            call.forget()
            return {"sessionId": "not-a-route"}
        raise ValueError("unknown")

    async def handle_notification(self, method: str, params: object) -> None:
        pass


async def test_each_frame_names_its_kind_request_and_session() -> None:
    source, sink, handler = MessageQueue(), RecordingSink(), Handler()
    connection = Connection(source, sink, handler)
    handler.connection = connection
    sink.expected = 7
    async with anyio.create_task_group() as group:
        group.start_soon(connection.serve)
        await source.put({"jsonrpc": "2.0", "id": "w", "method": "work", "params": {}})
        await source.put({"jsonrpc": "2.0", "id": 5, "method": "fails"})
        await source.put([{"jsonrpc": "2.0", "id": 1, "method": "work"}])  # v1: not a batch
        await source.put({"jsonrpc": "2.0", "id": None, "method": 3})
        with anyio.fail_after(60):
            await sink.arrived.wait()
        connection.close()

    facts = [(f.kind, f.request_id, f.session_id) for f in sink.frames]
    expected = [
        (NOTIFICATION, None, "s-1"),
        (NOTIFICATION, None, None),  # a sessionId that is not a string routes nowhere
        (REQUEST, 0, "s-2"),
        (ANSWER, "w", None),  # an answer routes by its request, never by its result
    ]
    assert [fact for fact in facts if fact in expected] == expected  # in the order sent
    errors = [fact for fact in facts if fact not in expected]
    # The failing request, and the two invalid ones (answered with id null).
    assert sorted(errors, key=repr) == [(ANSWER, 5, None), *[(ANSWER, None, None)] * 2]
    for frame in sink.frames:
        assert frame.data.endswith(b"\n")
        message: Any = json.loads(frame.data)
        if frame.kind == ANSWER:
            assert message["id"] == frame.request_id
        elif frame.kind == REQUEST:
            assert (message["id"], message["params"]["sessionId"]) == (0, "s-2")


async def test_a_batch_answer_is_one_batch_frame() -> None:
    source, sink, handler = MessageQueue(), RecordingSink(), Handler()
    connection = Connection(source, sink, handler)
    connection.accepts_batches = True
    handler.connection = connection
    sink.expected = 1
    async with anyio.create_task_group() as group:
        group.start_soon(connection.serve)
        await source.put([{"jsonrpc": "2.0", "id": 1, "method": "fails"}])
        with anyio.fail_after(60):
            await sink.arrived.wait()
        connection.close()
    assert [(f.kind, f.request_id, f.session_id) for f in sink.frames] == [(BATCH, None, None)]
    assert json.loads(sink.frames[0].data)[0]["id"] == 1
