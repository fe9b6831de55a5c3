"""Fixtures for the telemetry tests: the tool tests' workspace, home and scripted LLM
server, and an SDK recorder whose spans and metrics stay in memory (installed for the test,
the no-op put back after)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent.telemetry.telemetry_kit import Recorded, recording
from tests.agent.turn_tools.conftest import home, llm, workspace

__all__ = ["home", "llm", "recorded", "recorded_with_content", "workspace"]


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    with recording() as found:
        yield found


@pytest.fixture
def recorded_with_content() -> Iterator[Recorded]:
    with recording(content=True) as found:
        yield found
