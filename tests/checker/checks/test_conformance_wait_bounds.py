"""Waits that expect silence or a late answer end as soon as the evidence allows (issue 20
item 7): each test runs the checker with a long ``--timeout`` against a raw fixture agent
that behaves like a slow peer, inside a bound well below that timeout. The old code waited
the full timeout at least once and so ran into the bound; the verdicts stay what they were."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from acp_conformance.config import RunConfig
from acp_conformance.outcomes import Verdict
from acp_conformance.runner import RunResult, execute

from tests.checker.checks.conformance_checker_support import raw_agent

#: The checker's --timeout in these tests: what an unshortened wait would cost.
LONG_TIMEOUT = 60.0
#: The bound on a whole checker run: well below one LONG_TIMEOUT wait.
RUN_BOUND = 30.0

LLM: dict[str, Any] = {"llm": "anthropic", "agent_env": [("FIXTURE_LLM_URL", "{llm_url}")]}


def run_bounded(argv: list[str], only: list[str], **options: Any) -> RunResult:
    """The checker's result, or a TimeoutError once ``RUN_BOUND`` has passed."""
    config = RunConfig(argv=argv, only=only, timeout=LONG_TIMEOUT, jobs=2, **options)

    async def bounded() -> RunResult:
        with anyio.fail_after(RUN_BOUND):
            return await execute(config)

    return anyio.run(bounded)


@pytest.mark.subprocess
def test_a_turn_that_ends_without_asking_permission_ends_the_wait_for_one() -> None:
    # qwen-code does not ask before a scripted write: the cancel-during-permission check
    # waited a full --timeout for a permission request after the turn had already ended.
    result = run_bounded(
        raw_agent("--quirk", "unknown-tool-fails"),
        ["cancel.during-tool-call"],
        tools="claude-agent-acp",
        **LLM,
    )
    item = result.results["cancel.during-tool-call"]
    assert item.verdict is Verdict.NOT_APPLICABLE, item.reason
    assert "ended without asking permission" in item.reason
