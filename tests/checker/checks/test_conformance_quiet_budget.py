"""A quiet agent costs the run a bounded amount of waiting (issue 36, item 3): after the
first unanswered wait, later waits, on any connection of the run, shrink."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from acp_conformance.harness.agent_client import AgentConnection, AgentTimeout
from acp_conformance.harness.process import AgentProcess
from acp_conformance.harness.quiet_budget import (
    FLOOR,
    STARTUP_FLOOR,
    STARTUP_MARGIN,
    QuietBudget,
)
from acp_conformance.harness.recorder import Recorder

from tests.checker.checks.conformance_checker_support import raw_agent


def test_waits_shrink_after_the_first_unanswered_one() -> None:
    budget = QuietBudget(total=8.0)
    assert budget.bound(5.0) == 5.0  # an agent that answers never meets the budget
    budget.ran_out(5.0)
    bounds = []
    for _ in range(6):
        bounds.append(budget.bound(5.0))
        budget.ran_out(bounds[-1])
    assert bounds == [1.5, 0.75, 0.375, FLOOR, FLOOR, FLOOR]
    assert "shortened" in budget.describe()


def test_an_answer_to_a_real_request_makes_the_waits_whole_again() -> None:
    # A conformant agent on a loaded machine may miss one --timeout; its next answer shows
    # it is slow, not quiet, and later checks must not be judged on shortened waits.
    budget = QuietBudget(total=8.0)
    budget.ran_out(5.0)
    assert budget.bound(5.0) == 1.5
    budget.answered("session/new", 0.1)
    assert budget.bound(5.0) == 5.0
    budget.ran_out(5.0)  # quiet again: what was spent stays spent
    assert budget.bound(5.0) == FLOOR


def test_a_new_process_initialize_keeps_the_time_the_agent_needs_to_start() -> None:
    # codex-acp takes about a second to answer initialize; once the budget was spent, a later
    # scenario's setup waited 0.25 s and its first rule was charged a harness error.
    budget = QuietBudget(total=8.0)
    budget.answered("initialize", 2.0)  # does not make waits whole: it is no real request
    budget.ran_out(5.0)
    budget.ran_out(budget.bound(5.0))
    budget.ran_out(budget.bound(5.0))
    assert budget.bound(30.0) < 1.0  # a real request's wait is still shortened ...
    assert budget.bound(30.0, "initialize") == STARTUP_MARGIN * 2.0  # ... a start is not
    assert budget.bound(6.0, "initialize") == 6.0  # never longer than asked
    budget.answered("initialize", 0.1)
    assert budget.bound(30.0, "initialize") == STARTUP_MARGIN * 2.0  # the slowest counts
    assert budget.unanswered == 3


def test_the_start_allowance_has_a_floor_and_needs_one_answered_initialize() -> None:
    budget = QuietBudget(total=8.0)
    budget.ran_out(5.0)
    budget.ran_out(budget.bound(5.0))
    budget.ran_out(budget.bound(5.0))
    # an agent that never answered an initialize gets no allowance (it may never start)
    assert budget.bound(30.0, "initialize") == budget.bound(30.0) < 1.0
    budget.answered("initialize", 0.05)
    assert budget.bound(30.0, "initialize") == STARTUP_FLOOR


@pytest.mark.subprocess
def test_a_quiet_agent_shares_one_budget_across_connections(tmp_path: Path) -> None:
    budget = QuietBudget(total=2.0)
    messages: list[str] = []

    async def ask(conn: AgentConnection, times: int) -> None:
        for _ in range(times):
            with pytest.raises(AgentTimeout) as caught:
                await conn.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            messages.append(str(caught.value))

    async def scenario() -> None:
        agents = []
        async with anyio.create_task_group() as tg:
            for _ in range(2):
                agent = await AgentProcess.start(
                    raw_agent("--defect", "go-quiet"), env=dict(os.environ), cwd=tmp_path
                )
                conn = AgentConnection(agent, Recorder(), None, timeout=1.0, quiet=budget)
                conn.attach(tg)
                agents.append((agent, conn))
            first, second = agents[0][1], agents[1][1]
            with anyio.fail_after(30):
                answer = await first.request("initialize", {"protocolVersion": 1})
                assert not answer.is_error
                await ask(first, 3)
                await ask(second, 2)  # another process of the same run: already shortened
            for agent, _ in agents:
                await agent.shutdown(grace=5.0)
                await agent.process.aclose()
            tg.cancel_scope.cancel()

    anyio.run(scenario)
    assert messages[0].startswith("no response to session/new within 1 s")
    assert all("shortened" in m for m in messages[1:]), messages
    assert budget.unanswered == 5
    assert budget.spent == pytest.approx(1.0 + 0.5 + 0.25 + FLOOR + FLOOR)
    assert budget.slowest_start is not None and budget.slowest_start > 0  # the answered start
