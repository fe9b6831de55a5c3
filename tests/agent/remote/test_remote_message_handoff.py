"""The HTTP/WebSocket connection hands decoded messages to the agent peer as they are.

Before the peer became message-level, every client message was written out as an NDJSON
line into an in-memory pipe and parsed again, and every agent frame read back through a
second framer. These tests pin the direct path: the handler gets the very ``params`` object
the endpoint decoded, and the agent's answer reaches the stream as the bytes its encoder
wrote, in order.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup
from iac_code.remote.options import RemoteLimits
from iac_code.remote.remote_connection import ConnectionGone, RemoteConnection
from iac_code.rpc.connection import Connection
from iac_code.rpc.context import RequestContext

pytestmark = pytest.mark.anyio


class _RecordingHandler:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.seen: list[object] = []

    async def handle_request(self, ctx: RequestContext, method: str, params: object) -> object:
        self.seen.append(params)
        if method == "initialize":
            return {"protocolVersion": 1}
        await self.connection.send_notification(
            "session/update", {"sessionId": "s1", "update": {"n": 1}}
        )
        await self.connection.send_notification(
            "session/update", {"sessionId": "s1", "update": {"n": 2}}
        )
        return {"stopReason": "end_turn"}

    async def handle_notification(self, method: str, params: object) -> None:
        self.seen.append(params)


async def test_client_messages_reach_the_handler_without_being_re_encoded() -> None:
    handlers: list[_RecordingHandler] = []

    def make_handler(connection: Connection, _group: TaskGroup) -> Any:
        handler = _RecordingHandler(connection)
        handlers.append(handler)

        async def on_close() -> None:
            return None

        return handler, on_close

    remote = RemoteConnection("http", make_handler, RemoteLimits())
    initialize: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1},
    }
    prompt: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": []},
    }
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            await group.start(remote.run)
            answer = await remote.initialize(initialize)
            assert answer == {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}

            stream = remote.session_stream("s1")
            reader = stream.attach()
            remote.remember_answer_route(prompt, "s1")
            await remote.send(prompt)
            frames = [await stream.next_event(reader) for _ in range(3)]
            remote.close()

    handler = handlers[0]
    # The same objects, not equal copies: nothing between the endpoint and the peer
    # turned them into text and back.
    assert handler.seen[0] is initialize["params"]
    assert handler.seen[1] is prompt["params"]
    assert [event.data for event in frames if event is not None] == [
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"n":1}}}',
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"n":2}}}',
        b'{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}',
    ]


async def test_a_message_after_close_is_refused() -> None:
    def make_handler(connection: Connection, _group: TaskGroup) -> Any:
        async def on_close() -> None:
            return None

        return _RecordingHandler(connection), on_close

    remote = RemoteConnection("websocket", make_handler, RemoteLimits())
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            await group.start(remote.run)
            remote.close()
            await remote.closed.wait()
    with pytest.raises(ConnectionGone):
        await remote.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {}})
