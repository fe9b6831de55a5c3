"""Shared pieces of the v2 tests that follow the official test kit's failures (issue 21)."""

from __future__ import annotations

from typing import Any

from acp_schema.validation import validate_message

from tests.agent.process.stdio_harness import BlockingAgent

#: Bound on waits that include the first model call (it imports the anthropic SDK, which is
#: slow on a loaded machine). A bound, never a sleep.
MODEL_WAIT = 60.0

V2_INIT = {"protocolVersion": 2, "info": {"name": "v2-kit-client", "version": "0.1"}}


def start_v2(agent: BlockingAgent) -> None:
    assert agent.call("initialize", V2_INIT).result["protocolVersion"] == 2


def update_of(frame: Any) -> dict[str, Any] | None:
    if isinstance(frame, dict) and frame.get("method") == "session/update":
        update: dict[str, Any] = frame["params"]["update"]
        return update
    return None


def is_idle(frame: Any) -> bool:
    update = update_of(frame)
    return bool(update and update["sessionUpdate"] == "state_update" and update["state"] == "idle")


def is_state(frame: Any, state: str) -> bool:
    update = update_of(frame)
    return bool(update and update["sessionUpdate"] == "state_update" and update["state"] == state)


def session_updates(frames: list[Any], session_id: str) -> list[tuple[int, dict[str, Any]]]:
    """(index, update) of every ``session/update`` for ``session_id`` in ``frames``."""
    return [
        (index, frame["params"]["update"])
        for index, frame in enumerate(frames)
        if update_of(frame) is not None and frame["params"]["sessionId"] == session_id
    ]


def v2_problems(agent: BlockingAgent) -> list[str]:
    """Schema problems of the agent's requests and notifications (v2 schemas)."""
    problems: list[str] = []
    for frame in agent.frames:
        if isinstance(frame, dict) and "method" in frame:
            problems += [f"{frame}: {e}" for e in validate_message(frame, version=2)]
    return problems
