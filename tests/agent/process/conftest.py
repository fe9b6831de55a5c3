"""Fixtures for the subprocess tests: one scripted LLM server per module (see llm_routes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.llm_routes import route


@pytest.fixture(scope="module")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(route) as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"
