"""Fixtures for the model-client tests: a scripted server per test, and client factories."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from acp_scripted_llm import ScriptedLLMServer


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A running server with an empty script (echo fallback); tests add turns."""
    with ScriptedLLMServer() as server:
        yield server
