"""An OTLP/HTTP receiver on 127.0.0.1: where an agent under test sends its telemetry.

``acp-conformance run --traceparent`` starts one and points the agent at it with
``OTEL_EXPORTER_OTLP_ENDPOINT``; the runtime's own tests use it as their collector. It accepts
``POST /v1/traces`` and ``POST /v1/metrics`` (protobuf, optionally gzip), decodes them with the
``opentelemetry-proto`` messages (the checker's ``otel`` extra, imported only here) and keeps
everything, raw bytes included (so a test can check that some text appears nowhere in what
was exported).
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    trace_state: str
    attributes: dict[str, Any]
    status_code: int
    resource: dict[str, Any]


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(item) for item in any_value.array_value.values)
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


@dataclass
class OtlpReceiver:
    url: str = ""
    raw_traces: list[bytes] = field(default_factory=list)
    traces: list[ExportTraceServiceRequest] = field(default_factory=list)
    metrics: list[ExportMetricsServiceRequest] = field(default_factory=list)
    lock: threading.Condition = field(default_factory=threading.Condition)

    def spans(self) -> list[ReceivedSpan]:
        found: list[ReceivedSpan] = []
        with self.lock:
            requests = list(self.traces)
        for request in requests:
            for resource_spans in request.resource_spans:
                resource = _attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        found.append(
                            ReceivedSpan(
                                name=span.name,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_span_id=span.parent_span_id.hex(),
                                trace_state=span.trace_state,
                                attributes=_attributes(span.attributes),
                                status_code=span.status.code,
                                resource=resource,
                            )
                        )
        return found

    def metric_names(self) -> set[str]:
        with self.lock:
            requests = list(self.metrics)
        return {
            metric.name
            for request in requests
            for resource_metrics in request.resource_metrics
            for scope_metrics in resource_metrics.scope_metrics
            for metric in scope_metrics.metrics
        }

    def wait_for_trace(self, trace_id: str, timeout: float) -> list[ReceivedSpan]:
        """The spans of ``trace_id`` (hex), waiting up to ``timeout`` seconds for the first
        (blocking: call it from a worker thread); [] when none came."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                found = [span for span in self.spans() if span.trace_id == trace_id]
                left = deadline - time.monotonic()
                if found or left <= 0:
                    return found
                self.lock.wait(left)

    def exported_bytes(self) -> bytes:
        with self.lock:
            return b"".join(self.raw_traces)


def _handler_for(receiver: OtlpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path == "/v1/traces":
                request: Any = ExportTraceServiceRequest.FromString(body)
                answer: Any = ExportTraceServiceResponse()
                with receiver.lock:
                    receiver.traces.append(request)
                    receiver.raw_traces.append(body)
                    receiver.lock.notify_all()
            elif self.path == "/v1/metrics":
                request = ExportMetricsServiceRequest.FromString(body)
                answer = ExportMetricsServiceResponse()
                with receiver.lock:
                    receiver.metrics.append(request)
            else:
                self.send_error(404)
                return
            payload = answer.SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            del format, args  # quiet: the test output is for failures

    return Handler


@contextmanager
def running_receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(receiver))
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
