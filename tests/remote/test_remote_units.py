"""Sans-IO parts of the remote transport: event streams, replay, fast routing, host checks."""

from __future__ import annotations

import anyio
import pytest
from iac_code.remote.connection import _update_session_id
from iac_code.remote.options import is_loopback_host
from iac_code.remote.protocol import message_key, needs_session_header
from iac_code.remote.streams import OutboundStream, OutputBudget, ReaderBusy, ResumeGone
from iac_code.rpc.framing import encode_message

pytestmark = pytest.mark.anyio


async def test_stream_ids_single_reader_and_resume() -> None:
    budget = OutputBudget(limit=10_000)
    stream = OutboundStream(budget, replay_bytes=10_000)
    assert [stream.push(b"a"), stream.push(b"b"), stream.push(b"c")] == [1, 2, 3]
    assert budget.pending_bytes == 3
    reader = stream.attach()
    with pytest.raises(ReaderBusy):
        stream.attach()
    with anyio.fail_after(1):
        first = await stream.next_event(reader)
        second = await stream.next_event(reader)
    assert (first and first.id, second and second.id) == (1, 2)
    stream.detach(reader)  # dropped after event 2 was written, perhaps never received
    resumed = stream.attach(last_event_id=1)
    with anyio.fail_after(1):
        ids = [(await stream.next_event(resumed)).id for _ in range(2)]  # type: ignore[union-attr]
    assert ids == [2, 3]
    assert budget.pending_bytes == 0
    stream.finish()
    with anyio.fail_after(1):
        assert await stream.next_event(resumed) is None


async def test_replay_buffer_is_bounded() -> None:
    stream = OutboundStream(OutputBudget(limit=10_000), replay_bytes=4)
    for _ in range(10):
        stream.push(b"xx")
    reader = stream.attach()
    with anyio.fail_after(1):
        for _ in range(10):
            await stream.next_event(reader)
    stream.detach(reader)
    with pytest.raises(ResumeGone):
        stream.attach(last_event_id=2)
    kept = stream.attach(last_event_id=8)  # the last two events are still kept
    assert [e.id for e in stream.ready_events(kept, 10)] == [9, 10]


async def test_budget_wakes_waiters_when_a_reader_takes_output() -> None:
    budget = OutputBudget(limit=2)
    stream = OutboundStream(budget, replay_bytes=0)
    stream.push(b"xyz")
    assert budget.full
    reader = stream.attach()
    async with anyio.create_task_group() as group:
        group.start_soon(budget.wait_for_progress)
        await anyio.wait_all_tasks_blocked()
        stream.ready_events(reader, 1)
    assert not budget.full


def test_update_fast_path_matches_a_full_parse() -> None:
    frame = encode_message(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1", "update": {}}}
    ).rstrip(b"\n")
    assert _update_session_id(frame) == "s-1"
    escaped = encode_message(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 'a"b'}}
    ).rstrip(b"\n")
    assert _update_session_id(escaped) is None  # falls back to the full parse
    other = encode_message({"jsonrpc": "2.0", "id": 1, "result": {}}).rstrip(b"\n")
    assert _update_session_id(other) is None


def test_ids_hosts_and_scoping() -> None:
    assert message_key(1) != message_key("1")
    assert message_key(True) is None and message_key(None) is None
    assert all(map(is_loopback_host, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback_host, ["0.0.0.0", "10.0.0.1", "example.com", "::"]))
    assert needs_session_header({"method": "session/prompt", "params": {}})
    assert needs_session_header({"method": "_x/custom", "params": {"sessionId": "s"}})
    assert not needs_session_header({"method": "session/new", "params": {"cwd": "/"}})
