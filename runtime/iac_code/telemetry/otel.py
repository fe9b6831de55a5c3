"""The recorder backed by the OpenTelemetry SDK (imported only when telemetry is on).

Spans follow the GenAI conventions: ``invoke_agent`` per prompt turn (its parent is the
W3C trace context in the prompt request's ``_meta``), ``chat`` per model request,
``execute_tool`` per tool call, plus a span per permission wait and per agent→client
request, which carries the trace on in its own ``_meta``. Prompt text and tool
arguments/results are recorded only with ``content`` (``--otel-content``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from iac_code import __version__
from iac_code.telemetry.instruments import Instruments
from iac_code.telemetry.noop import ModelCallRecord, PermissionRecord, Recorder, ToolCallRecord
from iac_code.telemetry.span_records import (
    PROVIDER,
    ModelCall,
    PermissionWait,
    ToolCall,
    error_type,
    mark_failed,
)

if TYPE_CHECKING:
    from iac_code.llm.contract import ModelRequest
    from iac_code.telemetry.config import TelemetryConfig

T = TypeVar("T")

#: How long the end of the process waits for the last export: a collector that is down would
#: otherwise hold the exit for the exporters' whole retry budget (18 s measured).
SHUTDOWN_GRACE_S = 3.0

AGENT_NAME = "iac-code"
_PROPAGATOR = TraceContextTextMapPropagator()


def _default_resource(env: Mapping[str, str]) -> Resource:
    """``OTEL_SERVICE_NAME``/``OTEL_RESOURCE_ATTRIBUTES`` as the SDK reads them; the service
    is called iac-code when neither names it."""
    attributes: dict[str, str] = {"service.version": __version__}
    named = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    if not named:
        attributes["service.name"] = AGENT_NAME
    return Resource.create(attributes)


class OtelRecorder(Recorder):
    def __init__(
        self,
        tracer_provider: TracerProvider,
        meter_provider: MeterProvider,
        *,
        content: bool = False,
        prometheus_reader: InMemoryMetricReader | None = None,
    ) -> None:
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self.tracer = tracer_provider.get_tracer("iac_code", __version__)
        self.metrics = Instruments.create(meter_provider.get_meter("iac_code", __version__))
        self.content = content
        self._prometheus_reader = prometheus_reader

    @classmethod
    def from_config(cls, config: TelemetryConfig, env: Mapping[str, str] | None = None) -> Recorder:
        """Exporters as the environment configures them (the OTLP exporters read their
        endpoint, headers and timeout from the ``OTEL_EXPORTER_OTLP_*`` variables)."""
        resource = _default_resource(os.environ if env is None else env)
        # Shut down by ``shutdown`` (bounded), not by the SDK's own unbounded exit handlers.
        tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        if config.otlp_traces:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        readers: list[MetricReader] = []
        if config.otlp_metrics:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        page = InMemoryMetricReader() if config.prometheus else None
        if page is not None:
            readers.append(page)
        meter_provider = MeterProvider(
            metric_readers=readers, resource=resource, shutdown_on_exit=False
        )
        return cls(tracer_provider, meter_provider, content=config.content, prometheus_reader=page)

    # ------------------------------------------------------------------ turns

    def invoke_agent(
        self,
        run: Awaitable[T],
        *,
        session_id: str,
        model: str,
        meta: Mapping[str, Any] | None,
        prompt: list[dict[str, Any]],
    ) -> Awaitable[T]:
        return self._invoke_agent(run, session_id, model, meta, prompt)

    async def _invoke_agent(
        self,
        run: Awaitable[T],
        session_id: str,
        model: str,
        meta: Mapping[str, Any] | None,
        prompt: list[dict[str, Any]],
    ) -> T:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": PROVIDER,
            "gen_ai.agent.name": AGENT_NAME,
            "gen_ai.conversation.id": session_id,
            "gen_ai.request.model": model,
        }
        if self.content:
            attributes["gen_ai.input.messages"] = json.dumps(
                [{"role": "user", "parts": prompt}], ensure_ascii=False
            )
        started = time.monotonic()
        outcome: dict[str, str] = {}
        with self.tracer.start_as_current_span(
            f"invoke_agent {AGENT_NAME}",
            context=parent_context(meta),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await run
            except BaseException as exc:
                kind = error_type(exc)
                if kind == "cancelled":  # the connection went away mid-turn
                    span.set_attribute("gen_ai.response.finish_reasons", ["cancelled"])
                    outcome = {"iac_code.stop_reason": "cancelled"}
                else:
                    mark_failed(span, kind, str(exc))
                    outcome = {"error.type": kind}
                raise
            else:
                stop_reason = _stop_reason(result)
                span.set_attribute("gen_ai.response.finish_reasons", [stop_reason])
                for name, value in _turn_usage(result).items():
                    span.set_attribute(name, value)
                outcome = {"iac_code.stop_reason": stop_reason}
                return result
            finally:
                self.metrics.turns.add(1, outcome)
                self.metrics.agent_duration.record(
                    time.monotonic() - started,
                    {"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": PROVIDER}
                    | outcome,
                )

    # ------------------------------------------------------------------ model, tools

    def model_call(self, request: ModelRequest) -> ModelCallRecord:
        return ModelCall(self, request)

    def tool_call(self, name: str, tool_call_id: str, arguments: Any) -> ToolCallRecord:
        return ToolCall(self, name, tool_call_id, arguments)

    def permission_wait(self, tool_name: str, tool_call_id: str) -> PermissionRecord:
        return PermissionWait(self, tool_name, tool_call_id)

    # ------------------------------------------------------------------ requests out

    async def client_request(
        self,
        send: Callable[[str, dict[str, Any]], Awaitable[Any]],
        method: str,
        params: dict[str, Any],
    ) -> Any:
        from acp_bindings.errors import RpcError

        started = time.monotonic()
        attributes = {"rpc.system": "jsonrpc", "rpc.method": method}
        outcome = "ok"
        with self.tracer.start_as_current_span(
            method,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                return await send(method, self.with_trace_meta(params))
            except RpcError as exc:
                outcome = "error"
                mark_failed(span, str(exc.code), exc.message or "")
                raise
            except BaseException as exc:
                outcome = error_type(exc)
                if outcome != "cancelled":
                    outcome = "error"
                    mark_failed(span, error_type(exc), str(exc))
                raise
            finally:
                span.set_attribute("iac_code.outcome", outcome)
                self.metrics.client_request_duration.record(
                    time.monotonic() - started, {"rpc.method": method, "iac_code.outcome": outcome}
                )

    def with_trace_meta(self, params: dict[str, Any]) -> dict[str, Any]:
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier)
        if not carrier:
            return params
        meta = params.get("_meta")
        return {**params, "_meta": {**meta, **carrier} if isinstance(meta, Mapping) else carrier}

    # ------------------------------------------------------------------ gauges, export

    def sessions_changed(self, delta: int) -> None:
        self.metrics.open_sessions.add(delta)

    def connections_changed(self, delta: int) -> None:
        self.metrics.open_connections.add(delta)

    def prometheus_text(self) -> str | None:
        if self._prometheus_reader is None:
            return None
        from iac_code.telemetry.prometheus import render

        return render(self._prometheus_reader.get_metrics_data())

    def current_ids(self) -> tuple[str, str] | None:
        span_context = trace.get_current_span().get_span_context()
        if not span_context.is_valid:
            return None
        return format(span_context.trace_id, "032x"), format(span_context.span_id, "016x")

    def shutdown(self) -> None:
        """Export what is left, waiting :data:`SHUTDOWN_GRACE_S` at most (in a daemon thread,
        so an unreachable collector costs the exit that long and no longer)."""
        worker = threading.Thread(target=self._shutdown_providers, name="otel-flush", daemon=True)
        worker.start()
        worker.join(SHUTDOWN_GRACE_S)

    def _shutdown_providers(self) -> None:
        self._tracer_provider.shutdown()
        self._meter_provider.shutdown()


def parent_context(meta: Mapping[str, Any] | None) -> otel_context.Context | None:
    """The trace context a request's ``_meta`` carries (``traceparent``/``tracestate``)."""
    if not isinstance(meta, Mapping) or not isinstance(meta.get("traceparent"), str):
        return None
    carrier = {
        key: meta[key] for key in ("traceparent", "tracestate") if isinstance(meta.get(key), str)
    }
    return _PROPAGATOR.extract(carrier)


def _stop_reason(result: Any) -> str:
    value = getattr(result, "stop_reason", None)
    return str(getattr(value, "value", value))


def _turn_usage(result: Any) -> dict[str, int]:
    meta = getattr(result, "field_meta", None) or {}
    usage = meta.get("iac_code", {}).get("usage", {}) if isinstance(meta, Mapping) else {}
    found = {
        "gen_ai.usage.input_tokens": usage.get("inputTokens"),
        "gen_ai.usage.output_tokens": usage.get("outputTokens"),
    }
    return {name: value for name, value in found.items() if isinstance(value, int)}
