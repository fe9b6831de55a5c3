"""Helpers for the conformance checker's self-tests: run the checker in-process against
the fixture agents."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from acp_conformance.config import RunConfig
from acp_conformance.run_result import RunResult
from acp_conformance.runner import execute

FIXTURES = Path(__file__).parent / "fixtures"
RAW_AGENT = FIXTURES / "raw_agent.py"
SDK_AGENT = FIXTURES / "sdk_echo_agent.py"

#: Fixture agents answer in milliseconds; a short bound keeps "no answer" probes cheap.
FAST_TIMEOUT = 1.5
#: For runs where nothing should go unanswered (the correct fixture): a wait that runs out
#: there is only the machine's load, and the generous bound costs nothing when all answer.
LOADED_MACHINE_TIMEOUT = 20.0


def raw_agent(*args: str) -> list[str]:
    return [sys.executable, str(RAW_AGENT), *args]


def run_checker(
    argv: list[str],
    *,
    only: list[str] | None = None,
    timeout: float = FAST_TIMEOUT,
    **options: object,
) -> RunResult:
    config = RunConfig(argv=argv, only=only or [], timeout=timeout, jobs=2, **options)  # type: ignore[arg-type]
    return anyio.run(execute, config)
