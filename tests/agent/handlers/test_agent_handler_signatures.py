"""Every ``IacAgent`` handler has exactly the signature of its generated ``AgentHandlers`` stub.

mypy already rejects an override whose types are incompatible with the stub, but it accepts
``params: Any -> Any`` (and any wider parameter type), which is how handlers drift away from
the schemas unnoticed. This test compares the resolved annotations exactly, at runtime, so it
costs milliseconds and fails as soon as a handler's parameter or result type differs from the
generated one — including after a schema change that regenerates the stubs.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import acp_bindings.models
import pytest
from acp_bindings.agent import AgentHandlers
from acp_bindings.models import NewSessionRequest, PromptRequest, PromptResponse
from iac_code.agent.acp_agent import IacAgent


class _GeneratedNames(Mapping[str, Any]):
    """Resolves the stubs' annotation names (imported there for type checking only)."""

    def __getitem__(self, name: str) -> Any:
        try:
            return getattr(acp_bindings.models, name)
        except AttributeError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _hints(function: Callable[..., Any]) -> dict[str, Any]:
    return typing.get_type_hints(function, localns=_GeneratedNames())


def _stub_names() -> list[str]:
    return sorted(
        name
        for name, member in vars(AgentHandlers).items()
        if not name.startswith("_") and inspect.iscoroutinefunction(member)
    )


def signature_drift(handlers: type[AgentHandlers]) -> dict[str, str]:
    """Per overridden handler, how its signature differs from the generated stub."""
    drift: dict[str, str] = {}
    for name in _stub_names():
        stub = getattr(AgentHandlers, name)
        handler = getattr(handlers, name)
        if handler is stub:
            continue  # left to the stub: answers -32601
        if list(inspect.signature(handler).parameters) != list(inspect.signature(stub).parameters):
            drift[name] = "different parameters"
            continue
        expected, actual = _hints(stub), _hints(handler)
        differences = [
            f"{key}: {actual.get(key)!r}, stub says {expected[key]!r}"
            for key in ("params", "return")
            if actual.get(key) != expected[key]
        ]
        if differences:
            drift[name] = "; ".join(differences)
    return drift


def test_every_implemented_handler_matches_its_generated_stub() -> None:
    assert signature_drift(IacAgent) == {}


def test_the_agent_implements_the_methods_it_advertises() -> None:
    implemented = {
        name
        for name in _stub_names()
        if getattr(IacAgent, name) is not getattr(AgentHandlers, name)
    }
    assert {
        "initialize",
        "authenticate",
        "session_new",
        "session_load",
        "session_resume",
        "session_fork",
        "session_close",
        "session_delete",
        "session_list",
        "session_set_mode",
        "session_set_config_option",
        "session_prompt",
        "session_cancel",
    } <= implemented


class _Drifting(AgentHandlers):
    async def session_prompt(self, params: Any) -> Any:
        raise NotImplementedError

    async def session_new(self, params: PromptRequest) -> Any:  # type: ignore[override]
        raise NotImplementedError

    async def session_load(self, request: NewSessionRequest) -> PromptResponse:  # type: ignore[override]
        raise NotImplementedError


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("session_prompt", "params: typing.Any"),
        ("session_new", "params: <class"),
        ("session_load", "different parameters"),
    ],
)
def test_a_handler_that_drifts_from_its_stub_is_reported(name: str, message: str) -> None:
    drift = signature_drift(_Drifting)
    assert set(drift) == {"session_prompt", "session_new", "session_load"}
    assert drift[name].startswith(message)
