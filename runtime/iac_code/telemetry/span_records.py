"""The span records of the SDK recorder: ``execute_tool``, ``permission_wait`` and ``chat``.

Each is a ``with`` block around one span (:class:`SpanRecord`), told how the work ended
(``outcome``, ``verdict``, ``saw``) and recording its attributes and metrics when the block
ends; :mod:`iac_code.telemetry.otel` hands them out.
"""

from __future__ import annotations

import json
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from iac_code.llm.contract import MessageFinished
from iac_code.telemetry.noop import ModelCallRecord, PermissionRecord, ToolCallRecord

if TYPE_CHECKING:
    from iac_code.llm.contract import ModelRequest, ModelResponse
    from iac_code.telemetry.instruments import Instruments
    from iac_code.tools.contract import ToolOutcome
    from iac_code.tools.permissions import Verdict

PROVIDER = "anthropic"


class OtelRecorder(Protocol):
    """What a span record needs of the SDK recorder that hands it out (``otel.OtelRecorder``):
    named here so the records do not import the module that imports them."""

    tracer: trace.Tracer
    metrics: Instruments
    content: bool


def error_type(exc: BaseException) -> str:
    """Low-cardinality name of what went wrong: ``cancelled`` or the exception's class."""
    if isinstance(exc, anyio.get_cancelled_exc_class() | GeneratorExit):
        return "cancelled"
    return type(exc).__qualname__


def mark_failed(span: trace.Span, kind: str, message: str = "") -> None:
    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, message[:200] or kind))


class SpanRecord:
    """One span for a ``with`` block, ended when the block ends; a ``current`` one is the
    current span inside the block, so spans started there become its children."""

    current = True

    def __init__(
        self,
        recorder: OtelRecorder,
        name: str,
        attributes: dict[str, Any],
        kind: SpanKind = SpanKind.INTERNAL,
    ) -> None:
        self.recorder = recorder
        self.span = recorder.tracer.start_span(name, kind=kind, attributes=attributes)
        self.started = time.monotonic()
        self._token: object | None = None

    def __enter__(self) -> Any:
        if self.current:
            self._token = otel_context.attach(trace.set_span_in_context(self.span))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            otel_context.detach(self._token)  # type: ignore[arg-type]
            self._token = None
        try:
            self.finish(exc)
        finally:
            self.span.end()

    def finish(self, exc: BaseException | None) -> None:
        """Record how the block ended (``exc``: what it raised) before the span ends."""

    def elapsed(self) -> float:
        return time.monotonic() - self.started


class ToolCall(SpanRecord, ToolCallRecord):
    def __init__(
        self, recorder: OtelRecorder, name: str, tool_call_id: str, arguments: Any
    ) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": tool_call_id,
            "gen_ai.tool.type": "extension" if name.startswith("mcp__") else "function",
        }
        if recorder.content:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(arguments, ensure_ascii=False)
        super().__init__(recorder, f"execute_tool {name}", attributes)
        self._name = name
        self._outcome: ToolOutcome | None = None

    def outcome(self, outcome: ToolOutcome) -> ToolOutcome:
        self._outcome = outcome
        return outcome

    def finish(self, exc: BaseException | None) -> None:
        span = self.span
        if exc is not None:
            label = error_type(exc)
            mark_failed(span, label, str(exc))
        else:
            label = tool_outcome_label(self._outcome)
            if label != "completed":
                mark_failed(span, label)
            if self.recorder.content and self._outcome is not None:
                span.set_attribute("gen_ai.tool.call.result", self._outcome.model_content)
        span.set_attribute("iac_code.tool.outcome", label)
        attributes = {"gen_ai.tool.name": self._name, "iac_code.tool.outcome": label}
        if label != "completed":
            attributes["error.type"] = label
        self.recorder.metrics.tool_duration.record(self.elapsed(), attributes)


def tool_outcome_label(outcome: ToolOutcome | None) -> str:
    """completed, declined (permission), timeout or failed."""
    if outcome is None or not outcome.is_error:
        return "completed"
    raw = outcome.raw_output
    if raw.get("declined"):
        return "declined"
    if raw.get("timedOut") or raw.get("timeout"):
        return "timeout"
    return "failed"


class PermissionWait(SpanRecord, PermissionRecord):
    def __init__(self, recorder: OtelRecorder, tool_name: str, tool_call_id: str) -> None:
        attributes = {"gen_ai.tool.name": tool_name, "gen_ai.tool.call.id": tool_call_id}
        super().__init__(recorder, "permission_wait", attributes)
        self._verdict: Verdict | None = None

    def verdict(self, verdict: Verdict) -> Verdict:
        self._verdict = verdict
        return verdict

    def finish(self, exc: BaseException | None) -> None:
        verdict = self._verdict
        if exc is not None or verdict is None or verdict.cancelled:
            outcome = "cancelled"
        else:
            outcome = "allowed" if verdict.allowed else "denied"
        self.span.set_attribute("iac_code.permission.outcome", outcome)
        if verdict is not None and verdict.option_id:
            self.span.set_attribute("iac_code.permission.option_id", verdict.option_id)
        self.recorder.metrics.permission_outcomes.add(1, {"iac_code.permission.outcome": outcome})


class ModelCall(SpanRecord, ModelCallRecord):
    """A ``chat`` span. Not made current: it has no children, and the stream that reports to
    it is an async generator, where a context attached between yields would leak into the
    consumer."""

    current = False

    def __init__(self, recorder: OtelRecorder, request: ModelRequest) -> None:
        self._base = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": PROVIDER,
            "gen_ai.request.model": request.model,
        }
        attributes = {**self._base, "gen_ai.request.max_tokens": request.max_tokens}
        super().__init__(recorder, f"chat {request.model}", attributes, SpanKind.CLIENT)
        self._first_chunk_seen = False
        self._response: ModelResponse | None = None

    def saw(self, event: object) -> None:
        if isinstance(event, MessageFinished):
            self._response = event.response
        elif not self._first_chunk_seen:
            self._first_chunk_seen = True
            self.recorder.metrics.time_to_first_chunk.record(self.elapsed(), self._base)

    def finish(self, exc: BaseException | None) -> None:
        span, metrics = self.span, self.recorder.metrics
        attributes: dict[str, Any] = dict(self._base)
        response = self._response
        if response is not None:
            if response.model:
                attributes["gen_ai.response.model"] = response.model
                span.set_attribute("gen_ai.response.model", response.model)
            if response.message_id:
                span.set_attribute("gen_ai.response.id", response.message_id)
            span.set_attribute("gen_ai.response.finish_reasons", [response.stop_reason or ""])
            usage = response.usage
            span.set_attributes(
                {
                    "gen_ai.usage.input_tokens": usage.input_tokens,
                    "gen_ai.usage.output_tokens": usage.output_tokens,
                    "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
                    "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
                }
            )
            for token_type, count in (
                ("input", usage.input_tokens),
                ("output", usage.output_tokens),
            ):
                metrics.token_usage.record(count, {**attributes, "gen_ai.token.type": token_type})
        elif exc is not None:
            attributes["error.type"] = error_type(exc)
            mark_failed(span, attributes["error.type"], str(exc))
        metrics.operation_duration.record(self.elapsed(), attributes)
