"""Shared fixtures of the conformance checker's self-tests."""

from __future__ import annotations

import pytest
from acp_conformance.run_result import RunResult

from tests.checker.checks.conformance_checker_support import (
    LOADED_MACHINE_TIMEOUT,
    raw_agent,
    run_checker,
)


@pytest.fixture(scope="session")
def correct_full_run() -> RunResult:
    """Every requirement against the correct raw fixture, with the scripted LLM."""
    return run_checker(
        raw_agent(),
        llm="anthropic",
        agent_env=[("FIXTURE_LLM_URL", "{llm_url}")],
        fuzz_examples=5,
        timeout=LOADED_MACHINE_TIMEOUT,
    )
