"""JSON-RPC batches: answered only once the connection accepts them (protocol v2).

The v2 draft allows a non-empty array of messages on one line; v1 does not, so a v1
connection keeps answering any array with one ``-32600``. Driven by a raw NDJSON peer over
in-memory streams; every wait is bounded by ``serving``'s ``fail_after``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from acp_bindings.errors import MethodNotFoundError
from iac_code.rpc import RequestContext
from iac_code.rpc.connection import Connection, RequestHandler
from iac_code.rpc.memory import RawPeer, raw_peer_connection

pytestmark = pytest.mark.anyio

V = {"jsonrpc": "2.0"}


class Handler:
    def __init__(self) -> None:
        self.notifications: list[str] = []
        self.after: list[Any] = []
        self.release = anyio.Event()

    async def handle_request(self, ctx: RequestContext, method: str, params: Any) -> object:
        if method == "echo":
            return {"echo": params}
        if method == "slow":
            await self.release.wait()
            return {"slow": True}
        if method == "then_notify":

            async def after() -> None:
                await ctx.connection.send_notification("after", {"of": ctx.request_id})

            ctx.after_response(after)
            return {"queued": True}
        raise MethodNotFoundError(data={"method": method})

    async def handle_notification(self, method: str, params: object) -> None:
        self.notifications.append(method)


@asynccontextmanager
async def serving(
    handler: RequestHandler, *, batches: bool = True, **options: Any
) -> AsyncIterator[tuple[Connection, RawPeer]]:
    """The connection (``options`` are its keyword arguments) served while the block runs."""
    connection, peer = raw_peer_connection(handler, **options)
    connection.accepts_batches = batches
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            yield connection, peer
            peer.close_input()


def call(request_id: object, method: str, params: object = None) -> dict[str, Any]:
    message: dict[str, Any] = {**V, "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


async def test_an_empty_batch_gets_one_invalid_request_object() -> None:
    async with serving(Handler()) as (_, peer):
        await peer.send([])
        answer = await peer.receive()
    assert isinstance(answer, dict)
    assert answer["id"] is None and answer["error"]["code"] == -32600


async def test_a_batch_of_notifications_gets_no_reply() -> None:
    handler = Handler()
    async with serving(handler) as (_, peer):
        await peer.send([{**V, "method": "note/a"}, {**V, "method": "note/b"}])
        await peer.send(call("after", "echo"))
        first = await peer.receive()  # the next line on the wire answers the later request
    assert first == {**V, "id": "after", "result": {"echo": None}}
    assert sorted(handler.notifications) == ["note/a", "note/b"]


async def test_a_batch_of_requests_gets_one_array_matched_by_id() -> None:
    handler = Handler()
    async with serving(handler) as (_, peer):
        await peer.send([call("a", "slow"), call("b", "echo", {"x": 1}), {**V, "method": "n"}])
        handler.release.set()
        answer = await peer.receive()
    assert isinstance(answer, list) and len(answer) == 2
    by_id = {item["id"]: item for item in answer}
    assert by_id["a"]["result"] == {"slow": True}
    assert by_id["b"]["result"] == {"echo": {"x": 1}}


async def test_invalid_entries_get_one_invalid_request_each_and_the_connection_lives() -> None:
    async with serving(Handler()) as (_, peer):
        await peer.send([17, True, None])
        answer = await peer.receive()
        await peer.send(call(9, "unknown/method"))
        follow_up = await peer.receive()
    assert isinstance(answer, list) and len(answer) == 3
    assert all(item["id"] is None and item["error"]["code"] == -32600 for item in answer)
    assert follow_up["id"] == 9 and follow_up["error"]["code"] == -32601


async def test_valid_and_invalid_entries_share_the_array() -> None:
    async with serving(Handler()) as (_, peer):
        await peer.send([call(1, "echo"), {"id": 2, "method": "no-jsonrpc"}, call(3, "nope")])
        answer = await peer.receive()
    by_id = {item["id"]: item for item in answer}
    assert set(by_id) == {1, 2, 3}
    assert "result" in by_id[1]
    assert by_id[2]["error"]["code"] == -32600
    assert by_id[3]["error"]["code"] == -32601


async def test_work_after_a_batched_answer_follows_the_array() -> None:
    async with serving(Handler()) as (_, peer):
        await peer.send([call(1, "then_notify"), call(2, "echo")])
        answer = await peer.receive()
        after = await peer.receive()
    assert isinstance(answer, list) and {item["id"] for item in answer} == {1, 2}
    assert after == {**V, "method": "after", "params": {"of": 1}}


async def test_without_batches_an_array_is_one_invalid_request() -> None:
    async with serving(Handler(), batches=False) as (_, peer):
        await peer.send([call(1, "echo")])
        answer = await peer.receive()
        await peer.send([])
        empty = await peer.receive()
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert empty["id"] is None and empty["error"]["code"] == -32600
