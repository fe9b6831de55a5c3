"""What the user sees while a run is going: a live status line on a terminal, or plain
lines (a header, then one line per finished area) in logs.

The runner reports events through :class:`Progress`; the reporters here turn them into
output. The terminal reporter redraws its line from a small thread every half second so the
elapsed time moves even while one slow check waits on the agent.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from .config import RunConfig
    from .outcomes import Outcome
    from .requirements import Requirement


class Progress:
    """Receives the runner's events; the base class ignores them."""

    def started(self, requirements: list[Requirement], scenarios: list[str]) -> None:
        """The plan is known: these requirements, these scenarios."""

    def check_started(self, scenario: str, requirement: str) -> None:
        """A scenario check for ``requirement`` begins."""

    def scenario_done(self, scenario: str, outcomes: list[tuple[str, Outcome]]) -> None:
        """A scenario finished; ``outcomes`` pairs requirement ids with their outcomes."""

    def finished(self, verdicts: Mapping[str, str] | None = None) -> None:
        """The run is over (run-wide checks included); ``verdicts`` are the final verdict of
        every requirement (None when no scenario ran)."""


class _Counting(Progress):
    """Shared bookkeeping: which scenario checks each requirement still waits for."""

    def __init__(self, config: RunConfig, out: TextIO) -> None:
        self.config = config
        self.out = out
        self.lock = threading.Lock()
        self.begin = time.monotonic()
        self.total = 0
        self.done = 0
        self.current = ""
        self.areas: dict[str, list[str]] = {}
        self.verdicts: dict[str, list[str]] = {}
        self.open_areas: dict[str, int] = {}

    def started(self, requirements: list[Requirement], scenarios: list[str]) -> None:
        with self.lock:
            self.total = len(scenarios)
            for req in requirements:
                self.areas.setdefault(req.area, []).append(req.id)
            self.header(requirements, scenarios)

    def header(self, requirements: list[Requirement], scenarios: list[str]) -> None:
        self.out.write(
            f"acp-conformance {' '.join(self.config.argv)}: {len(requirements)} requirements "
            f"in {len(scenarios)} scenarios, profile {self.config.profile}, "
            f"--jobs {self.config.jobs}\n"
        )
        self.out.flush()

    def check_started(self, scenario: str, requirement: str) -> None:
        with self.lock:
            self.current = f"{scenario}: {requirement}"

    def scenario_done(self, scenario: str, outcomes: list[tuple[str, Outcome]]) -> None:
        with self.lock:
            self.done += 1
            for req_id, outcome in outcomes:
                self.verdicts.setdefault(req_id, []).append(outcome.verdict.value)

    def elapsed(self) -> float:
        return time.monotonic() - self.begin


class LineProgress(_Counting):
    """For logs: the header, one line per scenario as soon as it finishes, then one line per
    area with its final counts (run-wide checks included)."""

    def scenario_done(self, scenario: str, outcomes: list[tuple[str, Outcome]]) -> None:
        super().scenario_done(scenario, outcomes)
        with self.lock:
            counts: dict[str, int] = {}
            for _, outcome in outcomes:
                counts[outcome.verdict.value] = counts.get(outcome.verdict.value, 0) + 1
            summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "no checks"
            self.out.write(
                f"  [{self.done}/{self.total}] {scenario:<16} {summary}  ({self.elapsed():.1f} s)\n"
            )
            self.out.flush()

    def finished(self, verdicts: Mapping[str, str] | None = None) -> None:
        with self.lock:
            if not self.verdicts and not verdicts:
                self.out.write(f"  no scenario ran ({self.elapsed():.1f} s)\n")
                self.out.flush()
                return
            for area, ids in self.areas.items():
                counts: dict[str, int] = {}
                for req_id in ids:
                    final = [verdicts[req_id]] if verdicts and req_id in verdicts else None
                    for verdict in set(final or self.verdicts.get(req_id, [])):
                        counts[verdict] = counts.get(verdict, 0) + 1
                summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
                self.out.write(f"  {area:<10} {len(ids):3} requirements  {summary}\n")
            self.out.write(f"  ({self.elapsed():.1f} s)\n")
            self.out.flush()


class TerminalProgress(_Counting):
    """For a terminal: one status line, redrawn in place."""

    def __init__(self, config: RunConfig, out: TextIO) -> None:
        super().__init__(config, out)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, name="acp-progress", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _tick(self) -> None:
        while not self.stop.wait(0.5):
            self.redraw()

    def redraw(self) -> None:
        with self.lock:
            line = (
                f"[{self.done}/{self.total or '?'} scenarios, {self.elapsed():4.0f} s] "
                f"{self.current}"
            )
            self.out.write("\r\033[K" + line[:150])
            self.out.flush()

    def scenario_done(self, scenario: str, outcomes: list[tuple[str, Outcome]]) -> None:
        super().scenario_done(scenario, outcomes)
        self.redraw()

    def finished(self, verdicts: Mapping[str, str] | None = None) -> None:
        self.stop.set()
        with self.lock:
            self.out.write(f"\r\033[K{self.total} scenarios in {self.elapsed():.1f} s\n")
            self.out.flush()


@contextlib.contextmanager
def progress_reporter(config: RunConfig, out: TextIO) -> Iterator[Progress]:
    """The reporter suited to ``out`` (live line on a terminal, plain lines otherwise)."""
    if out.isatty():
        reporter = TerminalProgress(config, out)
        reporter.start()
        try:
            yield reporter
        finally:
            reporter.stop.set()
            reporter.thread.join(timeout=1.0)
    else:
        yield LineProgress(config, out)
