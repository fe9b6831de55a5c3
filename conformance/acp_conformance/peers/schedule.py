"""Which peer is checked next when several are checked side by side.

Most peers take seconds; a few take a minute or more, and what slows two checks side by side
is CPU, not time: a Node agent starting a model client for every ``session/new`` of the
fuzzing keeps a CPU busy, while an agent whose prompts wait on an unreachable model hardly
uses one. Two CPU-heavy checks side by side on a 2-CPU machine slow each other down by half;
one of them next to a string of light ones barely notices them. So, knowing what each peer's
check cost the last time (its report from an earlier run in the same folder: how long it took
and how many CPU seconds it used):

- a lane that frees up while a heavy check runs in another lane takes the lightest peer left
  (the fewest CPUs used per second), so a heavy check runs beside light ones for as long as
  there are any;
- otherwise it takes the heaviest one left, so the heavy checks start early rather than
  meeting at the end.

A check is heavy when it used ``HEAVY_CPU_SECONDS`` of CPU; for a report without CPU figures
(an older checker), when it took ``LONG_CHECK_SECONDS``. Without earlier reports the table's
order is kept. Results come back in the table's order whatever the order the checks ran in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["HEAVY_CPU_SECONDS", "LONG_CHECK_SECONDS", "PastCheck", "run_side_by_side"]

Item = TypeVar("Item")
Result = TypeVar("Result")

#: A check that used at least this much CPU (agents and checker) last time is a heavy one:
#: about what keeps one of two CPUs busy for the 90 s a peer's check may take, at half load.
HEAVY_CPU_SECONDS = 40.0
#: Without CPU figures: a check that took at least this long last time is a heavy one.
LONG_CHECK_SECONDS = 45.0


@dataclass(frozen=True)
class PastCheck:
    """What a peer's check cost the last time."""

    seconds: float
    #: CPU seconds of the agent processes and the checker (None: not on record).
    cpu_seconds: float | None = None

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


def run_side_by_side(
    items: Sequence[Item],
    run: Callable[[Item], Result],
    *,
    lanes: int,
    last_check: Callable[[Item], PastCheck | None],
) -> list[Result]:
    """``run`` every item, at most ``lanes`` at a time; the results in ``items``' order."""
    past = [last_check(item) for item in items]
    known = any(check is not None for check in past)
    remaining = list(range(len(items)))
    running: set[int] = set()
    results: dict[int, Result] = {}
    failures: list[BaseException] = []
    lock = threading.Lock()
    unknown = PastCheck(seconds=0.0, cpu_seconds=0.0)

    def cost(index: int) -> PastCheck:
        return past[index] or unknown

    def take_next() -> int | None:
        with lock:
            if not remaining or failures:
                return None
            if not known:
                chosen = remaining[0]
            elif any(cost(index).heavy for index in running):
                light = [index for index in remaining if not cost(index).heavy]
                if light:
                    chosen = min(light, key=lambda index: cost(index).load)
                else:
                    chosen = min(remaining, key=lambda index: cost(index).weight)
            else:
                chosen = max(remaining, key=lambda index: cost(index).weight)
            remaining.remove(chosen)
            running.add(chosen)
            return chosen

    def lane() -> None:
        while (index := take_next()) is not None:
            try:
                results[index] = run(items[index])
            except BaseException as exc:  # re-raised in the caller's thread below
                failures.append(exc)
            finally:
                with lock:
                    running.discard(index)

    threads = [threading.Thread(target=lane, daemon=True) for _ in range(max(1, lanes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return [results[index] for index in range(len(items))]
