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
from iac_code.rpc.framing import encode_message
from iac_code.rpc.memory import raw_peer_connection

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
    with anyio.fail_after(30):
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
