"""Which peer is checked next when several are checked side by side.

Most peers take seconds; a few take a minute or more, mostly spent by the agent itself on the
CPU (a Node agent starting a model client for every ``session/new`` of the fuzzing, say). Two
of those side by side on a 2-CPU machine slow each other down by half, while one of them next
to a string of quick peers barely notices them. So, knowing roughly how long each peer took
the last time (its report from an earlier run in the same folder):

- a lane that frees up while a long check runs in another lane takes the quickest peer left;
- otherwise it takes the longest one left, so the long checks start early and run beside the
  quick ones rather than beside each other at the end.

Without earlier reports the table's order is kept. Results come back in the table's order
whatever the order the checks ran in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["LONG_CHECK_SECONDS", "run_side_by_side"]

Item = TypeVar("Item")
Result = TypeVar("Result")

#: A check that took at least this long last time is a long one.
LONG_CHECK_SECONDS = 45.0


def run_side_by_side(
    items: Sequence[Item],
    run: Callable[[Item], Result],
    *,
    lanes: int,
    last_seconds: Callable[[Item], float | None],
) -> list[Result]:
    """``run`` every item, at most ``lanes`` at a time; the results in ``items``' order."""
    costs = [last_seconds(item) for item in items]
    known = any(cost is not None for cost in costs)
    remaining = list(range(len(items)))
    running: set[int] = set()
    results: dict[int, Result] = {}
    failures: list[BaseException] = []
    lock = threading.Lock()

    def cost(index: int) -> float:
        return costs[index] or 0.0

    def take_next() -> int | None:
        with lock:
            if not remaining or failures:
                return None
            if not known:
                chosen = remaining[0]
            elif any(cost(index) >= LONG_CHECK_SECONDS for index in running):
                chosen = min(remaining, key=cost)
            else:
                chosen = max(remaining, key=cost)
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
