"""Issue 19 item 1: large frames are encoded in a worker thread, small ones on the loop.

A multi-megabyte frame encoded on the event loop stalls every other request of the
connection; which thread ran the encoder is what these tests look at (no timing).
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest
from iac_code.rpc import RequestContext
from iac_code.rpc import connection as connection_module
from iac_code.rpc.memory import raw_peer_connection
from iac_code.rpc.payload_size import LARGE_FRAME_CHARS, at_least_chars

pytestmark = pytest.mark.anyio

BIG = "x" * (LARGE_FRAME_CHARS + 10)


class _Handler:
    async def handle_request(self, ctx: RequestContext, method: str, params: Any) -> object:
        if method == "notify_big":
            await ctx.connection.send_notification("update", {"text": BIG})
            await ctx.connection.send_notification("update", {"text": "small"})
            return {"big": BIG}
        return {}

    async def handle_notification(self, method: str, params: object) -> None:
        return None

    async def on_close(self) -> None:
        return None


def test_the_size_bound_counts_nested_strings_and_stops_early() -> None:
    assert at_least_chars({"a": [{"b": "x" * 50}, "y" * 50]}, 100)
    assert not at_least_chars({"a": [1, 2.5, None, "short"]}, 100)
    assert not at_least_chars("abc", 4)


async def test_large_frames_are_encoded_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop_thread = threading.current_thread()
    threads: list[tuple[int, bool]] = []
    original = connection_module.encode_message

    def recording(message: object) -> bytes:
        frame = original(message)
        threads.append((len(frame), threading.current_thread() is loop_thread))
        return frame

    monkeypatch.setattr(connection_module, "encode_message", recording)
    connection, peer = raw_peer_connection(_Handler())
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "notify_big"})
            frames = [await peer.receive() for _ in range(3)]
            peer.close_input()
    assert frames[0]["params"]["text"] == BIG
    assert frames[1]["params"]["text"] == "small"
    assert frames[2]["result"] == {"big": BIG}
    big_on_loop = [on_loop for size, on_loop in threads if size > LARGE_FRAME_CHARS]
    small_on_loop = [on_loop for size, on_loop in threads if size <= LARGE_FRAME_CHARS]
    assert big_on_loop == [False, False]
    assert small_on_loop == [True]
