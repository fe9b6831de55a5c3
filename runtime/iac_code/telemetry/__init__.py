"""OpenTelemetry traces and metrics of the agent, and nothing at all when they are off.

The rest of the runtime calls the functions of this module at a handful of points (a turn,
a model request, a tool call, a permission wait, a request to the client, sessions and
connections opening and closing). They hand the work to the active recorder: by default
:data:`NOOP`, whose hooks return what they were given or a shared do-nothing object, so
that a process without the ``otel`` extra or without an endpoint imports nothing from
``opentelemetry`` and pays a function call per hook. :func:`start` installs the
SDK-backed recorder of :mod:`iac_code.telemetry.otel` when the ``OTEL_*`` variables ask
for it (see :mod:`iac_code.telemetry.config`).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from iac_code.telemetry.noop import NOOP, Recorder

if TYPE_CHECKING:
    from iac_code.llm.contract import ModelRequest
    from iac_code.settings import Settings
    from iac_code.telemetry.noop import ModelCallRecord, PermissionRecord, ToolCallRecord

__all__ = ["NOOP", "Recorder", "install", "recorder", "start"]

T = TypeVar("T")

_active: Recorder = NOOP


def recorder() -> Recorder:
    return _active


def install(new: Recorder) -> Recorder:
    """Make ``new`` the active recorder; returns the one it replaces (tests put it back)."""
    global _active
    previous, _active = _active, new
    return previous


def start(settings: Settings, env: Mapping[str, str] | None = None) -> Recorder:
    """Install the SDK recorder when the environment configures telemetry, else keep NOOP."""
    from iac_code.telemetry.config import telemetry_config

    env = os.environ if env is None else env
    config = telemetry_config(env, content=settings.otel_content)
    if config is None:
        return _active
    from iac_code.telemetry.otel import OtelRecorder

    install(OtelRecorder.from_config(config, env))
    return _active


def shutdown() -> None:
    """Flush and stop the exporters (end of the process); the no-op recorder is put back."""
    install(NOOP).shutdown()


# --- the hooks ---------------------------------------------------------------------------------


def invoke_agent(
    run: Awaitable[T],
    *,
    session_id: str,
    model: str,
    meta: Mapping[str, Any] | None,
    prompt: list[dict[str, Any]],
) -> Awaitable[T]:
    """A prompt turn (``run`` answers the ``PromptResponse``), continuing the trace that
    ``meta`` (the request's ``_meta``) carries."""
    return _active.invoke_agent(run, session_id=session_id, model=model, meta=meta, prompt=prompt)


def model_call(request: ModelRequest) -> ModelCallRecord:
    """One model request; the record is a context manager told of each streamed event."""
    return _active.model_call(request)


def tool_call(name: str, tool_call_id: str, arguments: Any) -> ToolCallRecord:
    """One tool call, made the current span while it runs."""
    return _active.tool_call(name, tool_call_id, arguments)


def permission_wait(tool_name: str, tool_call_id: str) -> PermissionRecord:
    """The wait for the user's answer to a permission request."""
    return _active.permission_wait(tool_name, tool_call_id)


def client_requests(
    send: Callable[[str, dict[str, Any]], Awaitable[Any]],
) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
    """``send`` (an agent→client request) with a span per request and the trace in
    ``_meta``; the active recorder is looked up per request."""

    async def traced(method: str, params: dict[str, Any]) -> Any:
        return await _active.client_request(send, method, params)

    return traced


def with_trace_meta(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with the current trace in ``_meta`` (requests to MCP servers)."""
    return _active.with_trace_meta(params)


def session_opened() -> None:
    _active.sessions_changed(1)


def session_closed() -> None:
    _active.sessions_changed(-1)


def connection_opened() -> Callable[[], None]:
    """Count a connection; returns the function that uncounts it (once, however often called)."""
    _active.connections_changed(1)
    counted = [True]

    def closed() -> None:
        if counted:
            counted.clear()
            _active.connections_changed(-1)

    return closed


def prometheus_text() -> str | None:
    """The metrics as Prometheus text, or None when that page is not configured."""
    return _active.prometheus_text()


def current_ids() -> tuple[str, str] | None:
    """The current trace and span id (hex), for log lines; None outside a span."""
    return _active.current_ids()
