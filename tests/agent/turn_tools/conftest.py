"""Fixtures for the end-to-end tool tests: a workspace, an agent home, a scripted LLM server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "main.tf").write_text('resource "null_resource" "demo" {}\n# end\n')
    (root / "modules").mkdir()
    (root / "modules" / "vars.tf").write_text('variable "region" {}\n')
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    """A scripted Anthropic endpoint; tests add turns with ``llm.script.add(...)``."""
    server = ScriptedLLMServer([])
    server.start()
    try:
        yield server
    finally:
        server.close()
