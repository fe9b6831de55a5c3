"""Metrics as Prometheus text (exposition format 0.0.4), for ``GET /metrics``.

Rendered from the SDK's cumulative collection: names with dots become underscores, a unit
of seconds adds ``_seconds``, counters end in ``_total``, up-down counters are gauges, and
histograms are ``_bucket`` lines (cumulative, with ``le``), ``_sum`` and ``_count``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.sdk.metrics.export import Gauge, Histogram, MetricsData, Sum

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_INVALID = re.compile(r"[^a-zA-Z0-9_:]")


def metric_name(name: str, unit: str) -> str:
    base = _INVALID.sub("_", name)
    if unit == "s" and not base.endswith("_seconds"):
        base += "_seconds"
    return base


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(attributes: Mapping[str, Any] | None, extra: Iterable[tuple[str, str]] = ()) -> str:
    pairs = [(_INVALID.sub("_", key), str(value)) for key, value in (attributes or {}).items()]
    pairs.extend(extra)
    if not pairs:
        return ""
    return "{" + ",".join(f'{key}="{_escape(value)}"' for key, value in pairs) + "}"


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if isinstance(value, float) else str(value)


def render(data: MetricsData | None) -> str:
    lines: list[str] = []
    for resource_metrics in data.resource_metrics if data is not None else ():
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                description = metric.description or ""
                lines.extend(
                    _metric_lines(metric.name, metric.unit or "", description, metric.data)
                )
    return "\n".join(lines) + "\n" if lines else ""


def _metric_lines(name: str, unit: str, description: str, data: Any) -> list[str]:
    base = metric_name(name, unit)
    if isinstance(data, Sum) and data.is_monotonic:
        kind, sample = "counter", base + "_total"
    elif isinstance(data, Sum | Gauge):
        kind, sample = "gauge", base
    elif isinstance(data, Histogram):
        kind, sample = "histogram", base
    else:
        return []
    lines = [f"# HELP {base} {_escape(description)}", f"# TYPE {base} {kind}"]
    for point in data.data_points:
        if isinstance(data, Histogram):
            running = 0
            bounds = [*point.explicit_bounds, math.inf]
            for bound, count in zip(bounds, point.bucket_counts, strict=True):
                running += count
                labels = _labels(point.attributes, [("le", _number(float(bound)))])
                lines.append(f"{base}_bucket{labels} {running}")
            lines.append(f"{base}_sum{_labels(point.attributes)} {_number(point.sum)}")
            lines.append(f"{base}_count{_labels(point.attributes)} {point.count}")
        else:
            lines.append(f"{sample}{_labels(point.attributes)} {_number(point.value)}")
    return lines
