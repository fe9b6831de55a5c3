"""The order peers are checked in side by side: long checks beside quick ones, results in the
table's order (acp_conformance.peers.schedule)."""

from __future__ import annotations

import threading

import pytest
from acp_conformance.peers.schedule import LONG_CHECK_SECONDS, run_side_by_side

LONG, SHORT = LONG_CHECK_SECONDS * 2, 1.0
WAIT = 10.0


def _ordered_run(
    costs: dict[str, float | None], lanes: int
) -> tuple[list[str], list[tuple[str, ...]]]:
    """Run the items with ``lanes`` lanes; each item finishes only when the test lets it, one
    at a time in the order they started, so what ran beside what is deterministic."""
    started: list[str] = []
    beside: list[tuple[str, ...]] = []
    running: list[str] = []
    lock = threading.Condition()

    def run(name: str) -> str:
        with lock:
            started.append(name)
            running.append(name)
            beside.append(tuple(sorted(running)))
            lock.notify_all()
            # Finish in start order, once every lane is busy or nothing else is left to start.
            assert lock.wait_for(
                lambda: (
                    running[0] == name and (len(running) == lanes or len(started) == len(costs))
                ),
                timeout=WAIT,
            )
            running.remove(name)
            lock.notify_all()
        return name.upper()

    names = list(costs)
    results = run_side_by_side(names, run, lanes=lanes, last_seconds=costs.get)
    assert results == [name.upper() for name in names]  # the table's order
    return started, beside


def test_without_earlier_reports_the_table_order_is_kept() -> None:
    started, _ = _ordered_run({"a": None, "b": None, "c": None}, lanes=2)
    assert started == ["a", "b", "c"]


def test_long_checks_start_first_and_run_beside_quick_ones() -> None:
    costs: dict[str, float | None] = {"q1": SHORT, "l1": LONG, "q2": SHORT, "l2": LONG}
    started, beside = _ordered_run(costs, lanes=2)
    assert started[:2] == ["l1", "q1"]  # the longest first, a quick one beside it
    assert ("l1", "l2") not in beside  # the two long checks never overlap


def test_one_lane_runs_longest_first() -> None:
    started, _ = _ordered_run({"q": SHORT, "l": LONG, "m": 20.0}, lanes=1)
    assert started == ["l", "m", "q"]


def test_a_failing_check_is_raised_and_nothing_more_starts() -> None:
    ran: list[str] = []

    def run(name: str) -> str:
        ran.append(name)
        raise RuntimeError(f"{name} broke")

    with pytest.raises(RuntimeError, match="a broke"):
        run_side_by_side(["a", "b", "c"], run, lanes=1, last_seconds=lambda _name: None)
    assert ran == ["a"]
