"""What the telemetry tests share: an in-memory SDK recorder and ways to read its spans."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from iac_code import telemetry
from iac_code.telemetry.otel import OtelRecorder
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

#: Every metric the agent records (names from the GenAI conventions, then the agent's own).
METRIC_NAMES = frozenset(
    {
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "gen_ai.client.operation.time_to_first_chunk",
        "gen_ai.invoke_agent.duration",
        "gen_ai.execute_tool.duration",
        "iac_code.turns",
        "iac_code.permission.outcomes",
        "iac_code.client.request.duration",
        "iac_code.sessions.open",
        "iac_code.connections.open",
    }
)

#: A caller's trace context as an editor would send it in ``_meta`` (W3C trace context).
CALLER_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN_ID = "00f067aa0ba902b7"
CALLER_TRACEPARENT = f"00-{CALLER_TRACE_ID}-{CALLER_SPAN_ID}-01"
CALLER_TRACESTATE = "editor=turn42"


@dataclass
class Recorded:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    recorder: OtelRecorder

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [span for span in self.spans() if span.name.startswith(prefix)]

    def one(self, prefix: str) -> ReadableSpan:
        found = self.named(prefix)
        assert len(found) == 1, [span.name for span in self.spans()]
        return found[0]

    def metric_points(self) -> dict[str, list[Any]]:
        """Data points by metric name, as collected now."""
        data = self.reader.get_metrics_data()
        points: dict[str, list[Any]] = {}
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    points.setdefault(metric.name, []).extend(metric.data.data_points)
        return points


@contextlib.contextmanager
def recording(*, content: bool = False) -> Iterator[Recorded]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    recorder = OtelRecorder(
        tracer_provider, meter_provider, content=content, prometheus_reader=reader
    )
    previous = telemetry.install(recorder)
    try:
        yield Recorded(exporter, reader, recorder)
    finally:
        telemetry.install(previous)
        recorder.shutdown()


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def all_attribute_text(spans: list[ReadableSpan]) -> str:
    """Every span's name, attributes, status and events as one string (for leak checks)."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.append(json.dumps(dict(span.attributes or {}), default=str))
        parts.append(str(span.status.description))
        parts.extend(json.dumps(dict(event.attributes or {}), default=str) for event in span.events)
    return "\n".join(parts)
