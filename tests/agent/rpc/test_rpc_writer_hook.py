"""The writer's hook before each batch: what the agent's write-ahead of streamed text hangs on
(issue 37, item 5a): it runs before the frames it precedes are written, once per batch, and its
failure never stops the output."""

from __future__ import annotations

import logging

import anyio
import pytest
from iac_code.rpc.channels import FrameSink
from iac_code.rpc.frames import NOTIFICATION, Frame
from iac_code.rpc.writer import FrameWriter

pytestmark = pytest.mark.anyio


class RecordingSink(FrameSink):
    """Keeps, in order, what the hook saw and what was written."""

    def __init__(self, journal: list[str]) -> None:
        self.journal = journal

    async def send_frames(self, frames: list[Frame]) -> None:
        self.journal.extend(f"wrote {bytes(frame.data).decode()}" for frame in frames)

    async def aclose(self) -> None:
        self.journal.append("closed")


def frame(text: str) -> Frame:
    return Frame(text.encode(), NOTIFICATION)


async def test_the_hook_runs_before_each_batch_is_written() -> None:
    journal: list[str] = []
    writer = FrameWriter(RecordingSink(journal), logger=logging.getLogger("test"))
    queued: list[str] = []
    writer.before_write = lambda: journal.append(f"stored {len(queued)}")
    for text in ("a", "b", "c"):  # queued before the writer runs: one batch
        queued.append(text)
        await writer.enqueue(frame(text))
    writer.close()
    with anyio.fail_after(60):
        await writer.run()
    assert journal == ["stored 3", "wrote a", "wrote b", "wrote c"]


async def test_a_failing_hook_is_logged_and_the_frames_still_go_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal: list[str] = []
    writer = FrameWriter(RecordingSink(journal), logger=logging.getLogger("test.hook"))

    def broken() -> None:
        raise RuntimeError("store exploded")

    writer.before_write = broken
    await writer.enqueue(frame("x"))
    writer.close()
    with anyio.fail_after(60):
        await writer.run()
    assert journal == ["wrote x"]
    assert "the hook before a write failed" in caplog.text
