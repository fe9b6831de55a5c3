"""The order peers are checked in side by side: CPU-heavy checks beside light ones, results
in the table's order (acp_conformance.peers.schedule)."""

from __future__ import annotations

import threading

import pytest
from acp_conformance.peers.schedule import (
    HEAVY_CPU_SECONDS,
    HUNGRY_CPU_SECONDS,
    LONG_CHECK_SECONDS,
    PastCheck,
    pick_next,
    run_side_by_side,
)

LONG, SHORT = PastCheck(LONG_CHECK_SECONDS * 2), PastCheck(1.0)
WAIT = 60.0


def _ordered_run(
    costs: dict[str, PastCheck | None], lanes: int
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
    results = run_side_by_side(names, run, lanes=lanes, last_check=costs.get)
    assert results == [name.upper() for name in names]  # the table's order
    return started, beside


def test_without_earlier_reports_the_table_order_is_kept() -> None:
    started, _ = _ordered_run({"a": None, "b": None, "c": None}, lanes=2)
    assert started == ["a", "b", "c"]


def test_long_checks_start_first_and_run_beside_quick_ones() -> None:
    costs: dict[str, PastCheck | None] = {"q1": SHORT, "l1": LONG, "q2": SHORT, "l2": LONG}
    started, beside = _ordered_run(costs, lanes=2)
    assert started[:2] == ["l1", "q1"]  # the longest first, a quick one beside it
    assert ("l1", "l2") not in beside  # the two long checks never overlap


def test_one_lane_runs_longest_first() -> None:
    started, _ = _ordered_run({"q": SHORT, "l": LONG, "m": PastCheck(20.0)}, lanes=1)
    assert started == ["l", "m", "q"]


def test_cpu_not_time_decides_what_runs_side_by_side() -> None:
    heavy = HEAVY_CPU_SECONDS * 2
    costs: dict[str, PastCheck | None] = {
        # The longest check of all, but it waits on an unreachable model: light.
        "waits": PastCheck(80.0, cpu_seconds=20.0),
        "busy1": PastCheck(60.0, cpu_seconds=heavy),
        "busy2": PastCheck(55.0, cpu_seconds=heavy * 0.9),
        # Quick, but it keeps both CPUs busy while it runs: run it where it slows no one.
        "hungry": PastCheck(15.0, cpu_seconds=28.0),
        "idle": PastCheck(15.0, cpu_seconds=2.0),
    }
    started, beside = _ordered_run(costs, lanes=2)
    assert started[:2] == ["busy1", "idle"]  # the longest heavy one first, the lightest beside
    assert ("busy1", "busy2") not in beside  # the heavy checks never overlap
    assert started.index("waits") < started.index("hungry")  # light per second first


HUNGRY = PastCheck(90.0, cpu_seconds=HUNGRY_CPU_SECONDS * 1.5)
HUNGRY2 = PastCheck(75.0, cpu_seconds=HUNGRY_CPU_SECONDS * 1.2)
WAITER = PastCheck(90.0, cpu_seconds=HEAVY_CPU_SECONDS / 2)  # long, but mostly waiting
BUSY = PastCheck(20.0, cpu_seconds=HEAVY_CPU_SECONDS * 0.9)  # not heavy, but busy while it runs


def test_a_hungry_check_starts_only_on_an_empty_machine_and_nothing_starts_beside_it() -> None:
    past = [WAITER, HUNGRY, SHORT]
    assert pick_next([0, 1, 2], running=(), past=past) == 1  # hungry ones first
    assert pick_next([0, 2], running={1}, past=past) is None  # even a waiter stays out
    assert pick_next([1, 2], running={0}, past=past) is None  # it waits for the lanes to empty


def test_hungry_checks_go_first_heaviest_first_then_the_longest_heavy_one() -> None:
    long_light = PastCheck(120.0, cpu_seconds=HEAVY_CPU_SECONDS / 4)
    heavy = PastCheck(60.0, cpu_seconds=HEAVY_CPU_SECONDS * 1.2)
    past = [SHORT, HUNGRY2, heavy, HUNGRY, WAITER, long_light]
    assert pick_next([0, 1, 2, 3, 4, 5], running=(), past=past) == 3
    assert pick_next([0, 1, 2, 4, 5], running=(), past=past) == 1
    assert pick_next([0, 2, 4, 5], running=(), past=past) == 2  # heavy before long
    assert pick_next([0, 4, 5], running={2}, past=past) == 5  # the lightest beside it
    assert pick_next([0, 4], running=(), past=past) == 4  # no heavy left: the longest


def test_an_old_report_without_cpu_figures_never_makes_a_check_hungry() -> None:
    past = [PastCheck(LONG_CHECK_SECONDS * 4), SHORT]
    assert pick_next([1], running={0}, past=past) == 1


def test_a_free_lane_waits_while_a_hungry_check_runs() -> None:
    started: list[str] = []
    waiting = threading.Event()

    def run(name: str) -> str:
        started.append(name)
        if name == "hungry":
            # The other lane found nothing it may start and waits: only then let it go on.
            assert waiting.wait(WAIT)
            assert started == ["hungry"]
        return name

    costs: dict[str, PastCheck | None] = {"light": SHORT, "hungry": HUNGRY, "busy": BUSY}
    results = run_side_by_side(
        list(costs), run, lanes=2, last_check=costs.get, on_lane_waiting=waiting.set
    )
    assert results == ["light", "hungry", "busy"]
    assert started[0] == "hungry"


def test_a_failing_check_is_raised_and_nothing_more_starts() -> None:
    ran: list[str] = []

    def run(name: str) -> str:
        ran.append(name)
        raise RuntimeError(f"{name} broke")

    with pytest.raises(RuntimeError, match="a broke"):
        run_side_by_side(["a", "b", "c"], run, lanes=1, last_check=lambda _name: None)
    assert ran == ["a"]


def test_a_first_run_into_an_empty_folder_schedules_by_the_typical_costs(tmp_path) -> None:
    # Without earlier reports the table's order used to decide, and opencode ran beside
    # claude-agent-acp (both ~110 s); the typical figures stand in for the reports.
    from acp_conformance.peers.__main__ import _last_check
    from acp_conformance.peers.agents import PEERS_BY_NAME
    from acp_conformance.peers.typical_costs import TYPICAL_COSTS

    assert set(TYPICAL_COSTS) == set(PEERS_BY_NAME) | {"iac-code"}
    past = [_last_check(peer, tmp_path) for peer in PEERS_BY_NAME.values()]
    assert past == [TYPICAL_COSTS[name] for name in PEERS_BY_NAME]
    names = list(PEERS_BY_NAME)
    first = pick_next(list(range(len(names))), set(), past)
    # the longest heavy check first; beside it, the check that loads the machine least
    assert first is not None and names[first] == "claude-agent-acp"
    beside = pick_next([i for i in range(len(names)) if i != first], {first}, past)
    assert beside is not None and names[beside] == "codex-acp"


def test_a_check_that_uses_one_cpu_at_a_time_is_not_hungry() -> None:
    # claude-agent-acp under the matrix's --jobs 1: 100 CPU-s in 100 s. Run alone, it left
    # one of two CPUs idle for 100 s.
    assert not PastCheck(100.0, cpu_seconds=HUNGRY_CPU_SECONDS).hungry
    assert PastCheck(60.0, cpu_seconds=HUNGRY_CPU_SECONDS).hungry  # ~1.7 CPUs


def test_an_earlier_report_wins_over_the_typical_cost(tmp_path) -> None:
    import json

    from acp_conformance.peers.__main__ import _last_check
    from acp_conformance.peers.agents import PEERS_BY_NAME

    report = {"durationSeconds": 12.5, "cpuSeconds": {"agents": 3.0, "checker": 1.0}}
    (tmp_path / "opencode.report.json").write_text(json.dumps(report))
    assert _last_check(PEERS_BY_NAME["opencode"], tmp_path) == PastCheck(12.5, 4.0)
