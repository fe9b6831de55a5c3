"""Fixtures for the telemetry tests: an agent home and workspace, and an SDK recorder
whose spans and metrics stay in memory (installed for the test, the no-op put back after)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.telemetry.telemetry_kit import Recorded, recording


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "main.tf").write_text('resource "null_resource" "demo" {}\n')
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    """A scripted Anthropic endpoint (the real SDK talks to it over HTTP)."""
    server = ScriptedLLMServer([])
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    with recording() as found:
        yield found


@pytest.fixture
def recorded_with_content() -> Iterator[Recorded]:
    with recording(content=True) as found:
        yield found
