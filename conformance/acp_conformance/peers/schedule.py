"""Which peer is checked next when several are checked side by side.

Most peers take seconds; a few take a minute or more, and what slows two checks side by side
is CPU, not time: a Node agent starting a model client for every ``session/new`` of the
fuzzing keeps a CPU busy, while an agent whose prompts wait on an unreachable model hardly
uses one. So, knowing what each peer's check cost the last time (its report from an earlier
run in the same folder: how long it took and how many CPU seconds it used), a free lane
decides in this order:

- a *hungry* check (``HUNGRY_CPU_SECONDS`` of CPU at ``HUNGRY_LOAD`` CPUs or more: it
  keeps both CPUs of a 2-CPU machine busy for most of its run) runs alone. Beside anything
  else, even an agent that mostly waits, it stretches far past its time alone, and alone it
  leaves little CPU idle. The hungry checks go first, heaviest first. (None of the peers is
  hungry under the matrix's ``--jobs 1``: the heaviest use about one CPU at a time.)
- then a lane that frees up while a heavy check (``HEAVY_CPU_SECONDS``) runs takes the
  lightest check left (the fewest CPUs used per second), so two heavy ones meet only when no
  light one remains;
- otherwise it takes the longest heavy check left, or the longest check when no heavy one
  is left, so the checks that set the end of the matrix start early.

For a report without CPU figures (an older checker), a check is heavy when it took
``LONG_CHECK_SECONDS`` and never hungry. Without earlier reports the table's order is kept.
Results come back in the table's order whatever the order the checks ran in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "HEAVY_CPU_SECONDS",
    "HUNGRY_CPU_SECONDS",
    "HUNGRY_LOAD",
    "LONG_CHECK_SECONDS",
    "PastCheck",
    "pick_next",
    "run_side_by_side",
]

Item = TypeVar("Item")
Result = TypeVar("Result")

#: A check that used at least this much CPU (agents and checker) last time is a heavy one:
#: about what keeps one of two CPUs busy for the 90 s a peer's check may take, at half load.
HEAVY_CPU_SECONDS = 40.0
#: A check that used at least this much CPU, ...
HUNGRY_CPU_SECONDS = 100.0
#: ... at this many CPUs on average or more, runs alone: it keeps both CPUs of a 2-CPU
#: machine busy for most of its run, so it leaves little room beside it. A check that used
#: as much CPU one CPU at a time (a serial ``--jobs 1`` run of an agent that starts Node for
#: every connection: claude-agent-acp, 100 CPU-s in 100 s) leaves the other CPU idle when
#: it runs alone; beside a check that mostly waits it costs the matrix nothing.
HUNGRY_LOAD = 1.5
#: Without CPU figures: a check that took at least this long last time is a heavy one.
LONG_CHECK_SECONDS = 45.0


@dataclass(frozen=True)
class PastCheck:
    """What a peer's check cost the last time."""

    seconds: float
    #: CPU seconds of the agent processes and the checker (None: not on record).
    cpu_seconds: float | None = None

    @property
    def hungry(self) -> bool:
        return (
            self.cpu_seconds is not None
            and self.cpu_seconds >= HUNGRY_CPU_SECONDS
            and self.load >= HUNGRY_LOAD
        )

    @property
    def heavy(self) -> bool:
        if self.cpu_seconds is not None:
            return self.cpu_seconds >= HEAVY_CPU_SECONDS
        return self.seconds >= LONG_CHECK_SECONDS

    @property
    def weight(self) -> float:
        """How much the check loads the machine in all (CPU seconds when known)."""
        return self.cpu_seconds if self.cpu_seconds is not None else self.seconds

    @property
    def load(self) -> float:
        """How hard it loads the machine while it runs (CPUs used, when known)."""
        if self.cpu_seconds is None:
            return self.seconds
        return self.cpu_seconds / max(self.seconds, 1.0)


#: A peer without an earlier report: assumed light.
_UNKNOWN = PastCheck(seconds=0.0)


def pick_next(
    remaining: Sequence[int], running: Collection[int], past: Sequence[PastCheck | None]
) -> int | None:
    """The index (into ``past``) of the check to start now, or None to wait for a running
    one to end. ``remaining`` is in the table's order and not empty."""
    if not any(check is not None for check in past):
        return remaining[0]

    def cost(index: int) -> PastCheck:
        return past[index] or _UNKNOWN

    if any(cost(index).hungry for index in running):
        return None
    hungry = [index for index in remaining if cost(index).hungry]
    if hungry:
        # It waits for the lanes to empty; nothing new starts meanwhile.
        return max(hungry, key=lambda index: cost(index).weight) if not running else None
    heavy = [index for index in remaining if cost(index).heavy]
    if any(cost(index).heavy for index in running):
        light = [index for index in remaining if index not in heavy]
        if light:
            return min(light, key=lambda index: cost(index).load)
        return min(remaining, key=lambda index: cost(index).weight)
    return max(heavy or remaining, key=lambda index: cost(index).seconds)


def run_side_by_side(
    items: Sequence[Item],
    run: Callable[[Item], Result],
    *,
    lanes: int,
    last_check: Callable[[Item], PastCheck | None],
    on_lane_waiting: Callable[[], None] | None = None,
) -> list[Result]:
    """``run`` every item, at most ``lanes`` at a time; the results in ``items``' order.

    ``on_lane_waiting`` (for tests) is called each time a free lane starts waiting for a
    running check to end because nothing may start beside it.
    """
    past = [last_check(item) for item in items]
    remaining = list(range(len(items)))
    running: set[int] = set()
    results: dict[int, Result] = {}
    failures: list[BaseException] = []
    changed = threading.Condition()

    def take_next() -> int | None:
        with changed:
            while remaining and not failures:
                chosen = pick_next(remaining, running, past)
                if chosen is not None:
                    remaining.remove(chosen)
                    running.add(chosen)
                    return chosen
                if on_lane_waiting is not None:
                    on_lane_waiting()
                changed.wait()  # a running check ends (pick_next never waits on nothing)
            return None

    def lane() -> None:
        while (index := take_next()) is not None:
            try:
                results[index] = run(items[index])
            except BaseException as exc:  # re-raised in the caller's thread below
                with changed:
                    failures.append(exc)
            finally:
                with changed:
                    running.discard(index)
                    changed.notify_all()

    threads = [threading.Thread(target=lane, daemon=True) for _ in range(max(1, lanes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return [results[index] for index in range(len(items))]
