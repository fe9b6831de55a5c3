"""Result rows, sample summaries and verdicts shared by every metric."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Verdict = Literal["ok", "MISSED", "n/a", "info", "ERROR"]
MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Summary:
    """Median, 90th percentile, min and max of a sample list (same unit as the samples)."""

    n: int
    median: float
    p90: float
    min: float
    max: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def summarize(samples: Sequence[float]) -> Summary:
    if not samples:
        raise ValueError("no samples to summarize")
    ordered = sorted(samples)
    # Nearest-rank 90th percentile: an observed value, never an interpolation.
    rank = max(1, math.ceil(0.9 * len(ordered)))
    return Summary(
        n=len(ordered),
        median=statistics.median(ordered),
        p90=ordered[rank - 1],
        min=ordered[0],
        max=ordered[-1],
    )


@dataclass(slots=True)
class Row:
    """One line of the table: a measured value against one target."""

    metric: str
    value: str
    target: str
    verdict: Verdict
    notes: str = ""
    data: dict[str, Any] = field(default_factory=dict)  # numbers and raw samples for JSON

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "value": self.value,
            "target": self.target,
            "verdict": self.verdict,
            "notes": self.notes,
            "data": self.data,
        }


def at_most(value: float, limit: float) -> Verdict:
    return "ok" if value <= limit else "MISSED"


def at_least(value: float, limit: float) -> Verdict:
    return "ok" if value >= limit else "MISSED"


def ms(seconds: float) -> str:
    """Milliseconds with a precision that suits the size."""
    value = seconds * 1000
    if value >= 100:
        return f"{value:.0f} ms"
    if value >= 10:
        return f"{value:.1f} ms"
    return f"{value:.2f} ms"


def mib(size: float) -> str:
    return f"{size / MIB:.1f} MiB"


def timing_text(summary: Summary) -> str:
    """``median X (p90 Y, min Z, n=N)`` for a summary of seconds."""
    return (
        f"median {ms(summary.median)} (p90 {ms(summary.p90)}, min {ms(summary.min)}, n={summary.n})"
    )


def ms_samples(samples: Sequence[float]) -> list[float]:
    """Seconds → milliseconds rounded for the JSON output."""
    return [round(s * 1000, 3) for s in samples]
