"""When the stdio agent starts loading the model SDK: once the client has opened a session,
never for a client that only asks ``initialize`` (a probe, a test kit's handshake checks)."""

from __future__ import annotations

from typing import Any, cast

import pytest
from iac_code.llm.preload import IdleGate
from iac_code.stdio_runtime import _CountedHandler

pytestmark = pytest.mark.anyio


class _Models:
    def __init__(self) -> None:
        self.preloads = 0

    def start_preload(self) -> bool:
        self.preloads += 1
        return True


class _Agent:
    def __init__(self, sessions: dict[str, object] | None = None) -> None:
        self.sessions: dict[str, object] = sessions or {}
        self.models = _Models()


class _Router:
    """Answers every request; ``session/new`` opens a session on the agent."""

    def __init__(self, agent: _Agent, gate: IdleGate) -> None:
        self.agent = agent
        self.gate = gate
        self.busy_during: list[bool] = []

    async def handle_request(self, ctx: Any, method: str, params: object) -> object:
        self.busy_during.append(self.gate.busy)
        if method == "session/new":
            self.agent.sessions[f"s{len(self.agent.sessions)}"] = object()
        return {}


def _handler(agent: _Agent) -> tuple[_CountedHandler, _Router, IdleGate]:
    gate = IdleGate()
    router = _Router(agent, gate)
    return _CountedHandler(cast(Any, router), gate, cast(Any, agent)), router, gate


async def test_no_preload_until_a_session_is_open_then_exactly_one() -> None:
    agent = _Agent()
    handler, router, gate = _handler(agent)
    await handler.handle_request(cast(Any, None), "initialize", {})
    await handler.handle_request(cast(Any, None), "authenticate", {})
    assert agent.models.preloads == 0
    await handler.handle_request(cast(Any, None), "session/new", {})
    assert agent.models.preloads == 1
    await handler.handle_request(cast(Any, None), "session/new", {})
    await handler.handle_request(cast(Any, None), "session/prompt", {})
    assert agent.models.preloads == 1
    # Every request was counted by the gate while it ran, and none is left counted.
    assert router.busy_during == [True] * 5
    assert not gate.busy


async def test_a_session_answered_by_the_start_up_fast_path_starts_the_preload_at_once() -> None:
    agent = _Agent({"fast": object()})
    handler, _, _ = _handler(agent)
    assert agent.models.preloads == 1
    await handler.handle_request(cast(Any, None), "session/prompt", {})
    assert agent.models.preloads == 1


async def test_a_failed_request_still_leaves_the_gate_and_checks_for_sessions() -> None:
    agent = _Agent()
    gate = IdleGate()

    class _Failing(_Router):
        async def handle_request(self, ctx: Any, method: str, params: object) -> object:
            self.agent.sessions["loaded"] = object()  # opened, then the answer fails
            raise RuntimeError("boom")

    handler = _CountedHandler(cast(Any, _Failing(agent, gate)), gate, cast(Any, agent))
    with pytest.raises(RuntimeError):
        await handler.handle_request(cast(Any, None), "session/load", {})
    assert not gate.busy
    assert agent.models.preloads == 1
