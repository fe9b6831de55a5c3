"""The single FIFO writer: every outgoing frame passes through one bounded queue.

Why one writer: SPEC §1 requires every ``session/update`` of a turn to reach the wire before
that turn's response. When both are queued here in the order they were sent, the order on the
wire is the order of the ``enqueue`` calls, whichever tasks made them.

Why batching: the writer takes everything already queued and writes it with one call. At
the 20,000 chunks/s relay target the cost of one write (a syscall, perhaps a thread hop) per
frame would dominate; one write per batch lets the batch size grow with the load.

Why count bytes: the queue holds at most ``max_queued_frames`` frames, but frames can be
large (a tool result, a model delta of hundreds of KiB), producers that find it full keep
their frame while they wait, and a client that never reads its stdout can keep sending
requests whose answers pile up that way. The writer therefore counts the bytes of every
frame handed to :meth:`FrameWriter.enqueue` until it is written. While that count is over
``max_pending_bytes``, the connection stops reading its input
(:meth:`FrameWriter.wait_for_room`) and :meth:`FrameWriter.enqueue` waits before it takes
another frame — so a turn streaming into an unread pipe stops pulling from the model
instead of queueing its whole output. Memory then stays bounded by the cap plus one frame
per producer.

Why count frames too: bytes alone let many *small* answers through. A client that never
reads and floods tiny requests got 158,000 of them accepted (1.4 GiB): each answer was ~100
bytes against the 16 MiB cap, but each was also a task parked in :meth:`enqueue` holding its
request and coroutine (kilobytes). So "room" also needs at most ``max_pending_frames``
frames unwritten; whatever produces them, the input stops being read past either cap.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import anyio

from iac_code.rpc.channels import FrameSink
from iac_code.rpc.errors import ConnectionClosedError
from iac_code.rpc.frames import Frame, frame_bytes

__all__ = [
    "DEFAULT_MAX_PENDING_BYTES",
    "DEFAULT_MAX_PENDING_FRAMES",
    "DEFAULT_MAX_QUEUED_FRAMES",
    "FrameWriter",
]

DEFAULT_MAX_QUEUED_FRAMES = 1024
DEFAULT_MAX_PENDING_BYTES = 16 * 2**20
#: Unwritten frames beyond which there is no room, whatever their size (see the module doc).
DEFAULT_MAX_PENDING_FRAMES = 4096


class FrameWriter:
    """Queue of encoded frames drained by :meth:`run` into ``sink``.

    ``enqueue`` fixes the frame's position in the FIFO before it returns, and waits only when
    the queue is full (backpressure from a slow reader). :meth:`close` lets :meth:`run` drain
    what is queued and return. If a write fails the queue is shut, and every later
    ``enqueue`` raises :class:`ConnectionClosedError`.
    """

    def __init__(
        self,
        sink: FrameSink,
        *,
        max_queued_frames: int = DEFAULT_MAX_QUEUED_FRAMES,
        max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES,
        max_pending_frames: int = DEFAULT_MAX_PENDING_FRAMES,
        logger: logging.Logger,
    ) -> None:
        size: float = math.inf if max_queued_frames <= 0 else max_queued_frames
        self._queue_in, self._queue_out = anyio.create_memory_object_stream[Frame](size)
        self._sink = sink
        self._logger = logger
        self.broken = False
        """True once a write failed (the peer stopped reading)."""
        self.done = anyio.Event()
        """Set when :meth:`run` returned."""
        self.max_pending_bytes = max_pending_bytes
        self.pending_bytes = 0
        """Bytes of frames given to :meth:`enqueue` and not yet written (or dropped)."""
        self.max_pending_frames = max_pending_frames
        self.pending_frames = 0
        """How many frames those bytes are."""
        self._room = anyio.Event()
        self._room.set()
        #: Called before each batch is written: the agent stores the streamed text of the
        #: chunks about to go out (write-ahead), one store append per batch, not per chunk.
        self.before_write: Callable[[], None] | None = None

    @property
    def has_room(self) -> bool:
        return (
            self.pending_bytes <= self.max_pending_bytes
            and self.pending_frames < self.max_pending_frames
        )

    async def wait_for_room(self) -> None:
        """Return once the pending bytes and frames are under their caps (or writing ended)."""
        while not self.has_room and not self.done.is_set():
            if self._room.is_set():
                self._room = anyio.Event()
            await self._room.wait()  # set by _settle, and by run() when it stops

    def _settle(self, size: int, frames: int = 1) -> None:
        self.pending_bytes -= size
        self.pending_frames -= frames
        if self.has_room:
            self._room.set()

    async def enqueue(self, frame: Frame) -> None:
        """Append one encoded frame to the FIFO; while more than ``max_pending_bytes`` are
        waiting to be written, first wait until the peer has read enough of them."""
        if not self.has_room:
            await self.wait_for_room()
        size = len(frame.data)
        self.pending_bytes += size
        self.pending_frames += 1
        try:
            # Fast path without a checkpoint: the frame's place is fixed immediately and a
            # burst of notifications does not yield to the event loop once per frame.
            self._queue_in.send_nowait(frame)
        except anyio.WouldBlock:
            try:
                await self._queue_in.send(frame)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._settle(size)
                raise ConnectionClosedError() from None
            except BaseException:
                self._settle(size)  # cancelled while waiting: the frame is dropped
                raise
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._settle(size)
            raise ConnectionClosedError() from None

    def close(self) -> None:
        """No more frames; :meth:`run` writes what is queued, then returns."""
        self._queue_in.close()

    async def run(self) -> None:
        """Write queued frames in batches until closed (or until a write fails)."""
        try:
            async with self._queue_out:
                while True:
                    try:
                        first = await self._queue_out.receive()
                    except anyio.EndOfStream:
                        return
                    batch = [first]
                    while True:
                        try:
                            batch.append(self._queue_out.receive_nowait())
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                    self._call_before_write()
                    try:
                        await self._sink.send_frames(batch)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                        self.broken = True
                        self._logger.warning("output closed by the peer: %r", exc)
                        return
                    finally:
                        self._settle(sum(map(len, map(frame_bytes, batch))), len(batch))
        finally:
            self.done.set()
            self._room.set()

    def _call_before_write(self) -> None:
        if self.before_write is None:
            return
        try:
            self.before_write()
        except Exception:  # its own failures are its business; the frames still go out
            self._logger.exception("the hook before a write failed")
