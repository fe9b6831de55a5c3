"""One outbound event stream of a remote connection (the connection stream or a session's).

Events get consecutive integer ids (sent as the SSE ``id:``). A stream keeps every event that
no reader has taken yet, plus a bounded tail of events already handed out, so a client whose
HTTP stream dropped can reconnect with ``Last-Event-ID`` and receive exactly what followed.
At most one reader is attached at a time (a second GET answers 409).

Accounting of not-yet-delivered bytes is shared by all streams of one connection
(:class:`OutputBudget`): past the connection's limit the agent waits until a reader makes room.
The tails kept for replay are bounded per stream and, together, per connection
(:class:`ReplayBudget`): a client that opens many session streams (each loaded session
replays its whole history through one) cannot make the server keep megabytes for each.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import anyio

__all__ = [
    "OutboundStream",
    "OutputBudget",
    "ReaderBusy",
    "ReplayBudget",
    "ResumeGone",
    "StreamEvent",
    "StreamReader",
]


@dataclass(frozen=True, slots=True)
class StreamEvent:
    id: int
    data: bytes
    """One JSON-RPC message, compact JSON without a trailing newline."""


class ReaderBusy(Exception):
    """The stream already has a reader."""


class ResumeGone(Exception):
    """``Last-Event-ID`` points before the oldest event still kept for replay."""


class _WakeUp:
    """Wakes whoever waits at the moment :meth:`set` is called.

    The event is made only when somebody waits: a stream is changed (and a budget makes
    progress) once per message, thousands of times a second in a streamed turn, while a
    reader or a writer waits only now and then.
    """

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: anyio.Event | None = None

    def set(self) -> None:
        event = self._event
        if event is not None:
            self._event = None
            event.set()

    async def wait(self) -> None:
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


class OutputBudget:
    """Undelivered bytes across the streams of one connection, and a wake-up for waiters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.pending_bytes = 0
        self._progress = _WakeUp()

    @property
    def full(self) -> bool:
        return self.pending_bytes >= self.limit

    def add(self, size: int) -> None:
        self.pending_bytes += size

    def take(self, size: int) -> None:
        self.pending_bytes -= size
        self._wake()

    def _wake(self) -> None:
        self._progress.set()

    async def wait_for_progress(self) -> None:
        await self._progress.wait()

    def release_all(self) -> None:
        """The connection ended: nobody needs to wait any more."""
        self._wake()


class ReplayBudget:
    """Bytes of already-delivered events that the streams of one connection keep for
    ``Last-Event-ID`` resumption. Past ``limit``, the stream that just delivered gives up its
    oldest events while it keeps more than its fair share (``limit`` / streams), then the
    stream keeping the most does: no stream can crowd out the others, and the common case
    (one busy stream) costs no scan of them all."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept_bytes = 0
        self._streams: list[OutboundStream] = []

    def register(self, stream: OutboundStream) -> None:
        self._streams.append(stream)

    def forget(self, stream: OutboundStream) -> None:
        if stream in self._streams:
            self._streams.remove(stream)

    def trim(self, active: OutboundStream | None = None) -> None:
        if self.kept_bytes <= self.limit:
            return
        fair_share = self.limit // max(1, len(self._streams))
        while self.kept_bytes > self.limit and active is not None:
            if active.replay_kept <= fair_share or not active.drop_oldest_delivered():
                break
        while self.kept_bytes > self.limit and self._streams:
            largest = max(self._streams, key=lambda stream: stream.replay_kept)
            if not largest.drop_oldest_delivered():
                break


class StreamReader:
    """The lease of the attached reader: where it is in the stream."""

    __slots__ = ("cursor", "detached")

    def __init__(self, cursor: int) -> None:
        self.cursor = cursor  # id of the last event handed to this reader
        self.detached = False


class OutboundStream:
    def __init__(
        self, budget: OutputBudget, replay_bytes: int, replay: ReplayBudget | None = None
    ) -> None:
        self._budget = budget
        self._replay_bytes = replay_bytes
        self._replay = replay
        if replay is not None:
            replay.register(self)
        self._events: deque[StreamEvent] = deque()
        self._next_id = 1
        self._delivered_upto = 0  # highest id ever handed to a reader
        self._delivered_bytes = 0  # bytes of kept events with id <= _delivered_upto
        self._reader: StreamReader | None = None
        self._finished = False
        self._changed = _WakeUp()

    # ------------------------------------------------------------------ writer side

    def push(self, data: bytes) -> int:
        """Queue one message; returns its event id. Ignored once the stream finished."""
        if self._finished:
            return 0
        event = StreamEvent(self._next_id, data)
        self._next_id += 1
        self._events.append(event)
        self._budget.add(len(data))
        self._notify()
        return event.id

    def finish(self) -> None:
        """No more events: the reader ends after taking what is queued."""
        self._finished = True
        self._notify()

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def has_reader(self) -> bool:
        return self._reader is not None

    @property
    def carried_events(self) -> bool:
        return self._next_id > 1

    @property
    def undelivered(self) -> int:
        return self._next_id - 1 - self._delivered_upto

    # ------------------------------------------------------------------ reader side

    def attach(self, last_event_id: int | None = None) -> StreamReader:
        """Become the reader; with ``last_event_id`` resume right after that event."""
        if self._reader is not None:
            raise ReaderBusy()
        cursor = self._delivered_upto
        if last_event_id is not None:
            # An id from the future (or another stream) cannot be honoured beyond what exists.
            cursor = max(0, min(last_event_id, self._delivered_upto))
            oldest = self._events[0].id if self._events else self._next_id
            if cursor + 1 < oldest:
                raise ResumeGone()
        reader = StreamReader(cursor)
        self._reader = reader
        return reader

    def detach(self, reader: StreamReader) -> None:
        if self._reader is reader:
            self._reader = None
            reader.detached = True
            self._notify()

    async def next_event(self, reader: StreamReader) -> StreamEvent | None:
        """The next event for ``reader``; None once the stream finished and is drained."""
        while True:
            if reader.detached:
                return None
            event = self._event_after(reader.cursor)
            if event is not None:
                reader.cursor = event.id
                if event.id > self._delivered_upto:
                    self._mark_delivered(event)
                return event
            if self._finished:
                return None
            await self._wait_changed()

    def ready_events(self, reader: StreamReader, limit: int) -> list[StreamEvent]:
        """Events available to ``reader`` right now (at most ``limit``), without waiting.

        Lets a writer send a burst of events in one write instead of one write each.
        """
        events: list[StreamEvent] = []
        while len(events) < limit and not reader.detached:
            event = self._event_after(reader.cursor)
            if event is None:
                break
            reader.cursor = event.id
            if event.id > self._delivered_upto:
                self._mark_delivered(event)
            events.append(event)
        return events

    def _event_after(self, cursor: int) -> StreamEvent | None:
        if not self._events:
            return None
        index = cursor + 1 - self._events[0].id
        if 0 <= index < len(self._events):
            return self._events[index]
        return None

    @property
    def replay_kept(self) -> int:
        """Bytes of delivered events this stream keeps for replay."""
        return self._delivered_bytes

    def _mark_delivered(self, event: StreamEvent) -> None:
        self._delivered_upto = event.id
        size = len(event.data)
        self._delivered_bytes += size
        if self._replay is not None:
            self._replay.kept_bytes += size
        self._budget.take(size)
        # Keep only a bounded tail of delivered events for Last-Event-ID replay.
        while self._delivered_bytes > self._replay_bytes and self.drop_oldest_delivered():
            pass
        if self._replay is not None:
            self._replay.trim(self)

    def drop_oldest_delivered(self) -> bool:
        """Forget the oldest event kept for replay; False when none is kept."""
        if not self._events or self._events[0].id > self._delivered_upto:
            return False
        dropped = self._events.popleft()
        self._delivered_bytes -= len(dropped.data)
        if self._replay is not None:
            self._replay.kept_bytes -= len(dropped.data)
        return True

    async def _wait_changed(self) -> None:
        await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()

    def discard_pending(self) -> None:
        """The connection was torn down: forget what no reader will take."""
        for event in self._events:
            if event.id > self._delivered_upto:
                self._budget.take(len(event.data))
        self._events.clear()
        self._delivered_upto = self._next_id - 1
        if self._replay is not None:
            self._replay.kept_bytes -= self._delivered_bytes
            self._replay.forget(self)
        self._delivered_bytes = 0
        self.finish()
