"""A client that stops reading our output makes us stop reading its input (issue 8, item 8).

Everything runs in memory: the connection's output is a pipe nobody reads (its small buffer
fills), and the test offers requests with ``send_nowait`` until the input pipe stays full.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from iac_code.rpc import RequestContext
from iac_code.rpc.connection import Connection
from iac_code.rpc.framing import encode_message
from iac_code.rpc.memory import RawPeer, memory_byte_pipe, raw_peer_connection

pytestmark = pytest.mark.anyio

PAYLOAD = "x" * 16_384  # each answer is ~16 KiB
LIMIT = 256 * 1024
TRIES = 4_000  # ~64 MiB of answers if nothing pushed back
#: Scheduler turns a full input pipe may stay full before we call the input paused.
PATIENCE = 2_000


class Echo:
    def __init__(self) -> None:
        self.calls = 0

    async def handle_request(self, ctx: RequestContext, method: str, params: Any) -> object:
        self.calls += 1
        return {"echo": params}

    async def handle_notification(self, method: str, params: object) -> None:
        return None


async def test_input_is_paused_while_the_output_backlog_is_over_the_limit() -> None:
    handler = Echo()
    connection, peer = raw_peer_connection(handler, max_pending_output_bytes=LIMIT)
    frames = [
        encode_message({"jsonrpc": "2.0", "id": n, "method": "echo", "params": [PAYLOAD]})
        for n in range(TRIES)
    ]
    answered: set[int] = set()
    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            accepted = 0
            refused_in_a_row = 0
            while accepted < TRIES and refused_in_a_row < PATIENCE:
                try:
                    peer.to_connection.send_nowait(frames[accepted])
                except anyio.WouldBlock:
                    refused_in_a_row += 1
                else:
                    accepted += 1
                    refused_in_a_row = 0
                await anyio.lowlevel.checkpoint()
            assert accepted < TRIES, "the input was never paused"
            # What is held is bounded by the limit (plus the requests read before it was
            # reached and what the pipe buffers), not by what the client sent.
            assert handler.calls < TRIES // 10, handler.calls
            assert connection._writer.pending_bytes <= LIMIT + 64 * len(frames[0])

            # Once the client reads, everything it sent is answered, in full.
            async def send_rest() -> None:
                for frame in frames[accepted:]:
                    await peer.send_bytes(frame)

            group.start_soon(send_rest)
            while len(answered) < TRIES:
                reply = await peer.receive()
                assert reply["result"] == {"echo": [PAYLOAD]}
                answered.add(reply["id"])
            peer.close_input()
    assert answered == set(range(TRIES))


class Streamer:
    """Answers one request after sending ``count`` notifications of ~16 KiB (a long turn)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.sent = 0
        self.connection: Any = None

    async def handle_request(self, ctx: RequestContext, method: str, params: Any) -> object:
        for n in range(self.count):
            await self.connection.send_notification("chunk", {"n": n, "text": PAYLOAD})
            self.sent += 1
        return {"done": self.sent}

    async def handle_notification(self, method: str, params: object) -> None:
        return None


async def test_a_handler_streaming_into_an_unread_output_waits_at_the_limit() -> None:
    # One request whose handler produces far more than the limit (a turn streaming a long
    # answer): the output queue must not take it all in while nobody reads.
    count = 2_000  # ~32 MiB
    handler = Streamer(count)
    # An output pipe without a buffer: every frame not read is held by the agent.
    to_connection_send, to_connection_receive = memory_byte_pipe()
    from_connection_send, from_connection_receive = memory_byte_pipe(0)
    connection = Connection(
        to_connection_receive, from_connection_send, handler, max_pending_output_bytes=LIMIT
    )
    peer = RawPeer(to_connection_send, from_connection_receive)
    handler.connection = connection
    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "stream", "params": {}})
            still = 0
            last = -1
            while still < PATIENCE:  # until the handler makes no more progress
                await anyio.lowlevel.checkpoint()
                still = still + 1 if handler.sent == last else 0
                last = handler.sent
            frame_bytes = len(PAYLOAD) + 64
            # The limit, plus the frame that took it over and the one waiting for room.
            assert handler.sent * frame_bytes <= LIMIT + 2 * frame_bytes, handler.sent
            assert connection._writer.pending_bytes <= LIMIT + 2 * frame_bytes

            # Once the client reads, everything arrives in order, the answer last.
            for n in range(count):
                frame = await peer.receive()
                assert frame["method"] == "chunk" and frame["params"]["n"] == n
            assert (await peer.receive())["result"] == {"done": count}
            peer.close_input()
