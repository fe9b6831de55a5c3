"""Sans-IO parts of the remote transport: event streams, replay, fast routing, host checks."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from iac_code.remote.options import RemoteLimits, is_loopback_host
from iac_code.remote.protocol import message_key, needs_session_header
from iac_code.remote.remote_connection import RemoteConnection
from iac_code.remote.streams import (
    OutboundStream,
    OutputBudget,
    ReaderBusy,
    ReplayBudget,
    ResumeGone,
)
from iac_code.rpc.frames import ANSWER, BATCH, NOTIFICATION, REQUEST, Frame

pytestmark = pytest.mark.anyio


async def test_stream_ids_single_reader_and_resume() -> None:
    budget = OutputBudget(limit=10_000)
    stream = OutboundStream(budget, replay_bytes=10_000)
    assert [stream.push(b"a"), stream.push(b"b"), stream.push(b"c")] == [1, 2, 3]
    assert budget.pending_bytes == 3
    reader = stream.attach()
    with pytest.raises(ReaderBusy):
        stream.attach()
    with anyio.fail_after(60):
        first = await stream.next_event(reader)
        second = await stream.next_event(reader)
    assert (first and first.id, second and second.id) == (1, 2)
    stream.detach(reader)  # dropped after event 2 was written, perhaps never received
    resumed = stream.attach(last_event_id=1)
    with anyio.fail_after(60):
        ids = [(await stream.next_event(resumed)).id for _ in range(2)]  # type: ignore[union-attr]
    assert ids == [2, 3]
    assert budget.pending_bytes == 0
    stream.finish()
    with anyio.fail_after(60):
        assert await stream.next_event(resumed) is None


async def test_replay_buffer_is_bounded() -> None:
    stream = OutboundStream(OutputBudget(limit=10_000), replay_bytes=4)
    for _ in range(10):
        stream.push(b"xx")
    reader = stream.attach()
    with anyio.fail_after(60):
        for _ in range(10):
            await stream.next_event(reader)
    stream.detach(reader)
    with pytest.raises(ResumeGone):
        stream.attach(last_event_id=2)
    kept = stream.attach(last_event_id=8)  # the last two events are still kept
    assert [e.id for e in stream.ready_events(kept, 10)] == [9, 10]


def _deliver_all(stream: OutboundStream) -> None:
    reader = stream.attach()
    stream.ready_events(reader, 1_000)
    stream.detach(reader)


async def test_the_replay_tails_of_all_streams_are_bounded_together() -> None:
    # 200 session streams x a 4 MiB tail each would be 800 MiB; the connection keeps 20 bytes
    # here (16 MiB by default).
    budget, replay = OutputBudget(limit=10_000), ReplayBudget(limit=20)
    streams = [OutboundStream(budget, replay_bytes=10, replay=replay) for _ in range(200)]
    for stream in streams:
        for _ in range(5):
            stream.push(b"xx")
        _deliver_all(stream)
    assert 0 < replay.kept_bytes <= 20
    assert sum(s.replay_kept for s in streams) == replay.kept_bytes
    with pytest.raises(ResumeGone):
        streams[-1].attach(last_event_id=1)


async def test_the_stream_over_its_share_gives_up_its_oldest_events_first() -> None:
    budget, replay = OutputBudget(limit=10_000), ReplayBudget(limit=20)
    quiet, busy, latest = (OutboundStream(budget, replay_bytes=10, replay=replay) for _ in "qbl")
    quiet.push(b"q" * 4)
    _deliver_all(quiet)
    for stream in (busy, latest):
        for _ in range(5):
            stream.push(b"xx")
        _deliver_all(stream)
    # The last stream to deliver was over its share (20 / 3 streams): it gave up its oldest.
    assert (quiet.replay_kept, busy.replay_kept, latest.replay_kept) == (4, 10, 6)
    with pytest.raises(ResumeGone):
        latest.attach(last_event_id=1)  # event 2 is gone
    resumed = latest.attach(last_event_id=2)
    assert [e.id for e in latest.ready_events(resumed, 10)] == [3, 4, 5]
    # A larger tail elsewhere is taken when the active stream is within its share.
    small = OutboundStream(budget, replay_bytes=10, replay=replay)
    small.push(b"s" * 2)
    _deliver_all(small)  # 22 bytes kept: 20 / 4 = 5 each; small keeps 2, so busy pays
    assert (busy.replay_kept, small.replay_kept, replay.kept_bytes) == (8, 2, 20)


async def test_a_released_stream_gives_its_replay_bytes_back() -> None:
    replay = ReplayBudget(limit=100)
    stream = OutboundStream(OutputBudget(limit=100), replay_bytes=100, replay=replay)
    stream.push(b"abc")
    _deliver_all(stream)
    assert replay.kept_bytes == 3
    stream.discard_pending()
    assert replay.kept_bytes == 0


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


async def test_frames_are_routed_by_their_facts_not_by_their_bytes() -> None:
    """The agent connection tells the router what each frame is; the bytes are only carried,
    so key order (or anything else in them) cannot change where a frame goes."""
    connection = RemoteConnection("http", _no_handler, RemoteLimits(max_id_length=16))
    connection.remember_answer_route({"jsonrpc": "2.0", "id": 3, "method": "session/prompt"}, "s-1")
    frames = [
        Frame(
            b'{"params":{"sessionId":"s-1"},"method":"session/update"}\n', NOTIFICATION, None, "s-1"
        ),
        Frame(b"carried, never parsed\n", NOTIFICATION, None, "s-1"),
        Frame(b'{"id":0,"method":"session/request_permission"}\n', REQUEST, 0, "s-2"),
        Frame(b'{"id":3,"result":{"sessionId":"s-2"}}\n', ANSWER, 3),
        Frame(b'{"id":4,"result":{}}\n', ANSWER, 4),  # no route remembered
        Frame(b'{"method":"x"}\n', NOTIFICATION, None, "s" * 17),  # over-long id
        Frame(b"[]\n", BATCH),
    ]
    for frame in frames:
        await connection.route(frame)

    def taken(stream: OutboundStream) -> list[bytes]:
        return [event.data for event in stream.ready_events(stream.attach(), 100)]

    assert taken(connection.session_stream("s-1")) == [
        frames[0].data[:-1],
        b"carried, never parsed",
        frames[3].data[:-1],  # the answer follows its request's stream, not its result
    ]
    assert taken(connection.session_stream("s-2")) == [frames[2].data[:-1]]
    assert taken(connection.connection_stream) == [frames[4].data[:-1], frames[5].data[:-1]]
    assert connection.agent_request_route({"id": 0}) == (True, "s-2")


def _no_handler(*_: object) -> Any:
    raise AssertionError("no agent runs in this test")


def test_ids_hosts_and_scoping() -> None:
    assert message_key(1) != message_key("1")
    assert message_key(True) is None and message_key(None) is None
    assert all(map(is_loopback_host, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback_host, ["0.0.0.0", "10.0.0.1", "example.com", "::"]))
    assert needs_session_header({"method": "session/prompt", "params": {}})
    assert needs_session_header({"method": "_x/custom", "params": {"sessionId": "s"}})
    assert not needs_session_header({"method": "session/new", "params": {"cwd": "/"}})
