"""Loading the model SDK in the background while the agent has nothing to do.

``import anthropic`` costs one to two seconds of CPU on the machines this runs on (far more
under load). Paid on the first prompt, it is the longest wait a user sees. So, once the client
has opened a session (nothing else can lead to a prompt) and the agent is idle, a daemon
thread imports the SDK, builds the client and runs one request through it against an
in-memory transport, so that every lazy cache on the way to the first real request is filled
too.

"Idle" means quiet for :data:`QUIET_SECONDS`: no request in progress and none finished in that
time. An editor goes quiet right after ``initialize`` and ``session/new`` while its user types,
so the preload still ends long before the first prompt; a script or test kit that starts an
agent for a handful of back-to-back requests (a conformance checker starts dozens) is gone
before the agent ever goes quiet, and no process pays a second of CPU for an SDK it never uses.
Nor does one that stays but never opens a session (the stdio handler starts the preload).

A thread shares the GIL with the event loop, and a thread busy importing would slow down every
request answered meanwhile. Two things keep it out of the way:

- :class:`IdleGate` counts the requests being handled. While any runs, the preload thread
  stops at its next audited event (an audit hook: ``import`` fires before each module, before
  any import lock is taken; ``open`` for each module's code; ``sys._getframe`` for each
  pydantic model class) and at the checkpoints between its steps, and goes on once the agent
  is idle again. A pause cannot deadlock: should another thread wait for a module the preload
  thread is in the middle of importing (CPython's import bookkeeping tells), the preload goes
  on and does not pause again until the agent has been idle once more.
- While the preload runs, the interpreter's switch interval is lowered, so the event loop
  gets the GIL back quickly whenever it wakes up for input.

A turn that needs the SDK before the preload is done calls :func:`hurry`: the gate stays open
from then on, and the turn waits (off the event loop) for the import like before.
"""

from __future__ import annotations

import _imp
import logging
import sys
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

#: How often a paused preload checks whether another thread waits for an import.
_CHECK_SECONDS = 0.05
#: How long the agent must have been without a request before the preload begins.
QUIET_SECONDS = 0.5
#: The interpreter's switch interval while the preload runs (the default is 5 ms).
PRELOAD_SWITCH_INTERVAL = 0.0002


class IdleGate:
    """Counts requests in progress; :meth:`pause` waits while any are."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._busy = 0
        self._period = 0  # incremented whenever the agent goes from idle to busy
        self._gave_up_in = -1  # the busy period in which a pause timed out
        self._open = False
        self._last_left = time.monotonic()  # when the last request ended (or the gate began)

    def enter(self) -> None:
        with self._condition:
            if self._busy == 0:
                self._period += 1
            self._busy += 1

    def leave(self) -> None:
        with self._condition:
            self._busy = max(0, self._busy - 1)
            if self._busy == 0:
                self._last_left = time.monotonic()
                self._condition.notify_all()

    def open_for_good(self) -> None:
        with self._condition:
            self._open = True
            self._condition.notify_all()

    @property
    def busy(self) -> bool:
        return self._busy > 0

    def wait_quiet(self, seconds: float) -> None:
        """Wait until no request has been in progress for ``seconds`` (or the gate is open)."""
        with self._condition:
            while not self._open:
                if self._busy:
                    self._condition.wait()
                    continue
                left = self._last_left + seconds - time.monotonic()
                if left <= 0:
                    return
                self._condition.wait(left)

    def pause(self, limit: float | None = None) -> None:
        """Wait until no request is being handled (at most ``limit`` seconds if given).

        Without a limit the wait also ends when some thread is blocked importing a module
        (it may be one the preload thread is in the middle of): the preload then goes on,
        and does not pause again in this busy period.
        """
        with self._condition:
            if self._open or self._busy == 0 or self._gave_up_in == self._period:
                return
            period = self._period
            waited = 0.0
            while not (self._open or self._busy == 0):
                step = _CHECK_SECONDS if limit is None else min(_CHECK_SECONDS, limit - waited)
                if step <= 0 or (limit is None and _someone_waits_for_an_import()):
                    self._gave_up_in = period
                    return
                self._condition.wait(step)
                waited += step


#: Threads of ours that import in the background: one of them waiting for a module the
#: preload holds is no reason to stop pausing (no request depends on it).
_BACKGROUND_PREFIX = "iac-code-"


def _someone_waits_for_an_import() -> bool:
    """Whether a thread a request may depend on (not one of our background importers) is
    blocked on a module lock, read from CPython's import bookkeeping; when that cannot be
    read, assume so, so that a pause can never deadlock."""
    from importlib import _bootstrap

    blocking = getattr(_bootstrap, "_blocking_on", None)
    if blocking is None:
        return True
    try:
        waiting = [tid for tid, lock in list(blocking.items()) if lock]
    except RuntimeError:  # changed size while we looked: somebody is importing
        return True
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    return any(not names.get(tid, "").startswith(_BACKGROUND_PREFIX) for tid in waiting)


class Preloader:
    """Runs ``work(checkpoint)`` once in a daemon thread, out of the event loop's way."""

    def __init__(self, gate: IdleGate) -> None:
        self.gate = gate
        self.done = threading.Event()
        self._thread: threading.Thread | None = None
        self._hook_installed = False
        self._ident: int | None = None  # the preload thread's, while it runs

    def start(self, work: Callable[[Callable[[], None]], None]) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._run, args=(work,), name="iac-code-preload", daemon=True
        )
        if not self._hook_installed:
            sys.addaudithook(self._on_audit)  # cannot be removed; a no-op once done
            self._hook_installed = True
        self._thread.start()

    def _on_audit(self, _event: str, _args: tuple[object, ...]) -> None:
        # Any audited event of the preload thread is a place to stop: "import" before each
        # module, "open" for its code, "sys._getframe" for every pydantic model class. Not
        # while the global import lock is held (finders run under it): a pause there would
        # hold up every other thread's imports.
        if self._ident == threading.get_ident() and self.gate.busy and not _imp.lock_held():
            self.gate.pause()

    def _run(self, work: Callable[[Callable[[], None]], None]) -> None:
        self._ident = threading.get_ident()
        self.gate.wait_quiet(QUIET_SECONDS)
        previous = sys.getswitchinterval()
        sys.setswitchinterval(min(previous, PRELOAD_SWITCH_INTERVAL))
        try:
            work(self.gate.pause)
        except BaseException:  # a failed preload only means the first turn loads it itself
            log.debug("preloading the model SDK failed", exc_info=True)
        finally:
            self._ident = None
            sys.setswitchinterval(previous)
            self.done.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)


#: One per process: an import is process-wide too.
GATE = IdleGate()
PRELOADER = Preloader(GATE)


def hurry() -> None:
    """Someone needs the SDK now: never pause the preload again."""
    GATE.open_for_good()
