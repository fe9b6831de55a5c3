"""Watching a model call for silence: tell the user early, give up at a deadline.

An endpoint that accepts the connection and then sends nothing (an overloaded proxy, a
server that hangs) would otherwise leave the editor with no sign of life until the HTTP read
timeout, and then the retries, ran out. :func:`watch_silence` runs beside the code that reads
the model's events: after ``notice_after`` seconds without one it calls ``on_quiet`` once (the
agent shows a notice), and after ``deadline`` seconds without one it cancels the reading and
raises a non-retryable :class:`ModelConnectionError` that says what to check.

Every event counts as a sign of life, so a long answer that streams is never cut off; only
silence is. Waiting uses the event loop's clock (``anyio.sleep_until``), never polling.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio

from .contract import ModelConnectionError

log = logging.getLogger(__name__)

#: Told how long the model has been silent and when the call will be given up.
QuietCallback = Callable[[float, float], Awaitable[None] | None]


class SilenceWatch:
    """What the reading side calls for each event (:meth:`heard`)."""

    def __init__(self, notice_after: float, deadline: float, on_quiet: QuietCallback) -> None:
        self.notice_after = notice_after
        self.deadline = deadline
        self._on_quiet = on_quiet
        self._last = anyio.current_time()
        #: Set by :meth:`heard` while the watch waits out a silence already told.
        self._spoke: anyio.Event | None = None
        self.expired = False

    def heard(self) -> None:
        """The model sent something: the silence starts again from now."""
        self._last = anyio.current_time()
        if self._spoke is not None:
            self._spoke.set()
            self._spoke = None

    async def run(self, reading: anyio.CancelScope) -> None:
        """Until cancelled: notify once per silence, cancel ``reading`` at the deadline."""
        noticed_for = math.nan  # the silence (by its start) already announced
        while True:
            quiet_since = self._last
            notice_at = quiet_since + self.notice_after
            if notice_at < quiet_since + self.deadline and noticed_for != quiet_since:
                await anyio.sleep_until(notice_at)
                if self._last != quiet_since:
                    continue  # heard meanwhile
                noticed_for = quiet_since
                try:
                    result = self._on_quiet(anyio.current_time() - quiet_since, self.deadline)
                    if inspect.isawaitable(result):
                        await result
                except Exception:  # a notice that cannot be given must not end the call
                    log.exception("telling the client that the model is silent failed")
                continue
            # Told already (or too short to tell): wait for the deadline, or for the model to
            # speak, after which a new silence is watched (and told) from the start.
            spoke = self._spoke = anyio.Event()
            with anyio.move_on_at(quiet_since + self.deadline):
                await spoke.wait()
            if self._last == quiet_since:
                self.expired = True
                reading.cancel()
                return


@asynccontextmanager
async def watch_silence(
    *, notice_after: float, deadline: float, on_quiet: QuietCallback, endpoint: str
) -> AsyncIterator[SilenceWatch]:
    """A :class:`SilenceWatch` over the block; raises when the block was cut at the deadline."""
    watch = SilenceWatch(notice_after, deadline, on_quiet)
    failure: Exception | None = None
    async with anyio.create_task_group() as group:
        with anyio.CancelScope() as reading:
            group.start_soon(watch.run, reading)
            try:
                yield watch
            except Exception as exc:
                # Raised again below, as itself: through the task group it would come out
                # wrapped in an ExceptionGroup, which the callers do not expect.
                failure = exc
            finally:
                group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    if watch.expired:
        raise ModelConnectionError(silence_message(endpoint, deadline), retryable=False)


def silence_message(endpoint: str, deadline: float) -> str:
    return (
        f"The model API at {endpoint} sent nothing for {deadline:g} s; check that the"
        " endpoint is up and not overloaded (the limit is model_timeout in config.toml,"
        " or --model-timeout)."
    )
