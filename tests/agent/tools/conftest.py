"""Fixtures for the tools tests: a real workspace directory and a context over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from iac_code.tools.contract import ToolContext


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    other = tmp_path / "outside"
    other.mkdir()
    return other


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("IAC_CODE_HOME", raising=False)
    return home


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext.for_session(workspace)
