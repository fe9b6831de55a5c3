"""Helpers for the conformance checker's self-tests: run the checker in-process against
the fixture agents."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from acp_conformance.config import RunConfig
from acp_conformance.outcomes import Verdict
from acp_conformance.run_result import RunResult
from acp_conformance.runner import execute
from acp_conformance.v2_drafts import KIT_DRAFT

FIXTURES = Path(__file__).parent / "fixtures"
RAW_AGENT = FIXTURES / "raw_agent.py"
SDK_AGENT = FIXTURES / "sdk_echo_agent.py"
RAW_V2_AGENT = FIXTURES / "raw_v2_agent.py"

#: Fixture agents answer in milliseconds; a short bound keeps "no answer" probes cheap.
FAST_TIMEOUT = 1.5
#: For runs where nothing should go unanswered (the correct fixture): a wait that runs out
#: there is only the machine's load, and the generous bound costs nothing when all answer.
LOADED_MACHINE_TIMEOUT = 20.0


#: The raw v1 fixture's turns on the checker's scripted model (it calls FIXTURE_LLM_URL).
LLM = {"llm": "anthropic", "agent_env": [("FIXTURE_LLM_URL", "{llm_url}")]}
#: The v2 turn checks need a prompt turn, which the checker runs only with a model; the
#: login check needs the operator's choice of method. The v2 fixture follows the official
#: kit, so it is graded as the kit's draft (alpha.5, which still has batches).
WITH_MODEL = {"llm": "anthropic", "auth_method": "fixture-login", "v2_draft": KIT_DRAFT}


def raw_agent(*args: str) -> list[str]:
    return [sys.executable, str(RAW_AGENT), *args]


def raw_v2_agent(*args: str) -> list[str]:
    return [sys.executable, str(RAW_V2_AGENT), *args]


def run_checker(
    argv: list[str],
    *,
    only: list[str] | None = None,
    timeout: float = FAST_TIMEOUT,
    **options: object,
) -> RunResult:
    config = RunConfig(argv=argv, only=only or [], timeout=timeout, jobs=2, **options)  # type: ignore[arg-type]
    return anyio.run(execute, config)


def verdicts(result: RunResult) -> dict[str, tuple[Verdict, str]]:
    """Each judged rule's verdict and reason."""
    return {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
