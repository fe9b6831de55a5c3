"""The recorder interface, and the recorder that records nothing (the default).

:class:`Recorder` is both: every hook does nothing here, and the SDK-backed recorder
(:mod:`iac_code.telemetry.otel`) overrides them. The records handed out by the hooks are
context managers; the no-op ones are shared singletons, so an instrumented call site costs
a function call and a ``with`` when telemetry is off.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from iac_code.llm.contract import ModelRequest
    from iac_code.tools.contract import ToolOutcome
    from iac_code.tools.permissions import Verdict

T = TypeVar("T")


class _Record:
    """A ``with`` block that records nothing."""

    def __enter__(self) -> Any:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class ModelCallRecord(_Record):
    def __enter__(self) -> ModelCallRecord:
        return self

    def saw(self, event: object) -> None:
        """A streamed event (a delta, or ``MessageFinished`` with the response)."""


class ToolCallRecord(_Record):
    def __enter__(self) -> ToolCallRecord:
        return self

    def outcome(self, outcome: ToolOutcome) -> ToolOutcome:
        """How the call ended; returns ``outcome`` so the call site stays one expression."""
        return outcome


class PermissionRecord(_Record):
    def __enter__(self) -> PermissionRecord:
        return self

    def verdict(self, verdict: Verdict) -> Verdict:
        """The user's answer; returned unchanged."""
        return verdict


_MODEL_CALL = ModelCallRecord()
_TOOL_CALL = ToolCallRecord()
_PERMISSION = PermissionRecord()


class Recorder:
    """Receives every hook of :mod:`iac_code.telemetry`; this base records nothing."""

    def invoke_agent(
        self,
        run: Awaitable[T],
        *,
        session_id: str,
        model: str,
        meta: Mapping[str, Any] | None,
        prompt: list[dict[str, Any]],
    ) -> Awaitable[T]:
        return run

    def model_call(self, request: ModelRequest) -> ModelCallRecord:
        return _MODEL_CALL

    def tool_call(self, name: str, tool_call_id: str, arguments: Any) -> ToolCallRecord:
        return _TOOL_CALL

    def permission_wait(self, tool_name: str, tool_call_id: str) -> PermissionRecord:
        return _PERMISSION

    async def client_request(
        self,
        send: Callable[[str, dict[str, Any]], Awaitable[Any]],
        method: str,
        params: dict[str, Any],
    ) -> Any:
        return await send(method, params)

    def with_trace_meta(self, params: dict[str, Any]) -> dict[str, Any]:
        return params

    def sessions_changed(self, delta: int) -> None:
        return None

    def connections_changed(self, delta: int) -> None:
        return None

    def prometheus_text(self) -> str | None:
        return None

    def current_ids(self) -> tuple[str, str] | None:
        return None

    def shutdown(self) -> None:
        return None


NOOP = Recorder()
