"""Waits that expect silence or a late answer end as soon as the evidence allows (issue 20
item 7): each test runs the checker with a long ``--timeout`` against a raw fixture agent
that behaves like a slow peer, inside a bound well below that timeout. The old code waited
the full timeout at least once and so ran into the bound; the verdicts stay what they were."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from acp_conformance.config import RunConfig
from acp_conformance.harness.agent_client import AgentTimeout
from acp_conformance.outcomes import Verdict
from acp_conformance.run_result import RunResult
from acp_conformance.runner import execute
from anyio import wait_all_tasks_blocked

from tests.checker.checks.conformance_checker_support import raw_agent

#: The checker's --timeout in these tests: what an unshortened wait would cost.
LONG_TIMEOUT = 600.0
#: The bound on a whole checker run: well below one LONG_TIMEOUT wait.
RUN_BOUND = 300.0

LLM: dict[str, Any] = {"llm": "anthropic", "agent_env": [("FIXTURE_LLM_URL", "{llm_url}")]}


def run_bounded(argv: list[str], only: list[str], jobs: int = 2, **options: Any) -> RunResult:
    """The checker's result, or a TimeoutError once ``RUN_BOUND`` has passed."""
    config = RunConfig(argv=argv, only=only, timeout=LONG_TIMEOUT, jobs=jobs, **options)

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


#: Every check whose prompt runs a turn on the agent's model, across three scenarios (the
#: fixture advertises no image or audio: those two are out of scope).
HANGING = [
    "session.load-replays-before-response",
    "prompt.text-accepted",
    "prompt.resource-link-accepted",
    "prompt.embedded-context-accepted",
    "gating.no-unadvertised-client-methods",
]


@pytest.mark.subprocess
def test_once_a_turn_hung_on_the_unreachable_model_later_prompts_wait_less(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # gemini-cli retries an unreachable model until cancelled: under --llm none each of its
    # prompt checks waited a full --timeout (9 x 30 s) for a not-applicable verdict.
    from acp_conformance.scenarios import check_context

    monkeypatch.setattr(check_context, "HUNG_TURN_BOUND", 1.0)
    timeout = 8.0  # five prompts: 40 s unshortened, 8 s + 4 x 1 s now
    config = RunConfig(
        argv=raw_agent("--quirk", "model-hangs"), only=HANGING, timeout=timeout, jobs=1
    )

    async def bounded() -> RunResult:
        with anyio.fail_after(4 * timeout):
            return await execute(config)

    result = anyio.run(bounded)
    outcomes = [
        outcome
        for rid in HANGING
        for outcome in result.results[rid].outcomes
        if outcome.check != "no_unadvertised_client_methods"
    ]
    assert len(outcomes) == len(HANGING), [o.check for o in outcomes]
    for outcome in outcomes:
        assert outcome.verdict is Verdict.NOT_APPLICABLE, (outcome.check, outcome.reason)
        assert "unreachable" in outcome.reason, outcome.reason
    shortened = [o.check for o in outcomes if "as an earlier prompt of this run" in o.reason]
    assert len(shortened) == len(HANGING) - 1, shortened


@pytest.mark.subprocess
def test_under_llm_none_turn_scenarios_wait_beside_the_jobs_slots() -> None:
    # One --jobs slot: the sessions scenario computes in it while the turns scenario, whose
    # prompt hangs on the unreachable model, waits beside it instead of after it.
    timeout = 4.0
    config = RunConfig(
        argv=raw_agent("--quirk", "model-hangs"),
        only=["session.new-returns-id", "prompt.text-accepted"],
        timeout=timeout,
        jobs=1,
    )
    result = anyio.run(execute, config)
    item = result.results["prompt.text-accepted"]
    assert item.verdict is Verdict.NOT_APPLICABLE and "unreachable" in item.reason, item.reason
    assert result.results["session.new-returns-id"].verdict is Verdict.PASS
    sessions = [run for run in result.runs if run.scenario == "sessions"]
    turns = [run for run in result.runs if run.scenario == "turns"]
    assert sessions and turns
    turns_began = min(run.recorder.started_wall for run in turns)
    sessions_ended = max(run.exit.at for run in sessions if run.exit is not None)
    # One after the other, the turns scenario would start once the sessions one had stopped
    # its processes; beside it, it starts while they run.
    assert turns_began < sessions_ended, (turns_began, sessions_ended)


@pytest.mark.subprocess
def test_a_prompt_that_answers_at_once_is_judged_as_before_under_llm_none() -> None:
    # The shortened bound applies only after a hung turn: an agent whose model call fails at
    # once is still judged on its answer (an internal error: not applicable either).
    result = run_bounded(
        raw_agent("--quirk", "model-unreachable"),
        ["prompt.text-accepted", "prompt.resource-link-accepted"],
    )
    for rid in ["prompt.text-accepted", "prompt.resource-link-accepted"]:
        item = result.results[rid]
        assert item.verdict is Verdict.NOT_APPLICABLE, item.reason
        assert "answered error -32603" in item.reason, item.reason


@pytest.mark.subprocess
def test_an_ignored_cancel_request_is_judged_by_how_fast_session_cancel_worked() -> None:
    # qwen-code, claude-agent-acp and opencode honour session/cancel within a second or two
    # but ignore $/cancel_request: the check waited a full --timeout (30 s) for the prompt.
    result = run_bounded(
        raw_agent("--defect", "ignore-cancel-request"),
        ["cancel.prompt-returns-cancelled", "cancel.cancel-request-prompt"],
        **LLM,
    )
    assert result.results["cancel.prompt-returns-cancelled"].verdict is Verdict.PASS
    item = result.results["cancel.cancel-request-prompt"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert "session/cancel ended a turn of this agent within" in item.reason, item.reason


@pytest.mark.subprocess
def test_an_honoured_cancel_request_still_passes() -> None:
    result = run_bounded(
        raw_agent(), ["cancel.prompt-returns-cancelled", "cancel.cancel-request-prompt"], **LLM
    )
    item = result.results["cancel.cancel-request-prompt"]
    assert item.verdict is Verdict.PASS, item.reason


#: One or two processes in each of seven scenarios (each scenario stops its own).
ACROSS_SCENARIOS = [
    "init.version-negotiation",
    "session.new-returns-id",
    "modes.set-mode-works",
    "jsonrpc.method-not-found",
    "robustness.oversized-line",
    "version.v2-negotiation",
    "shutdown.exits-on-stdin-eof",
]


@pytest.mark.subprocess
def test_once_a_process_ignored_stdin_eof_the_others_get_a_short_wait_for_it() -> None:
    # codex-acp and claude-agent-acp (and every HTTP server) do not exit when stdin closes:
    # each scenario's shutdown waited the full grace (5 s) before SIGTERM, 18 times a run.
    # One scenario at a time: the preflight and seven scenarios took 8 x 5 s, now 5 s + 7 x 1 s.
    result = run_bounded(raw_agent("--defect", "no-exit-on-eof"), ACROSS_SCENARIOS, jobs=1)
    item = result.results["shutdown.exits-on-stdin-eof"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert "were given 1 s, once an earlier process had not exited" in item.reason, item.reason
    for rid in ACROSS_SCENARIOS[:-1]:
        assert result.results[rid].verdict is not Verdict.FAIL, (rid, result.results[rid].reason)


@pytest.mark.subprocess
def test_processes_that_exit_on_stdin_eof_keep_the_full_wait() -> None:
    result = run_bounded(raw_agent(), ACROSS_SCENARIOS)
    item = result.results["shutdown.exits-on-stdin-eof"]
    assert item.verdict is Verdict.PASS, item.reason
    assert all(run.exit is None or run.exit.eof_wait is None for run in result.runs)


@pytest.mark.subprocess
def test_a_dropped_schema_invalid_request_is_judged_soon_after_a_later_answer() -> None:
    # codex-acp never answers an initialize whose params are a string: the invalid-params
    # fuzz waited a full --timeout (30 s) for that answer.
    result = run_bounded(
        raw_agent("--defect", "drop-non-object-params"), ["robustness.fuzz-invalid-params"]
    )
    item = result.results["robustness.fuzz-invalid-params"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert "answered a request sent after it, and nothing followed" in item.reason


@pytest.mark.subprocess
def test_schema_invalid_requests_answered_with_errors_still_pass() -> None:
    result = run_bounded(raw_agent(), ["robustness.fuzz-invalid-params"])
    item = result.results["robustness.fuzz-invalid-params"]
    assert item.verdict is Verdict.PASS, item.reason


@pytest.mark.subprocess
def test_a_prompt_already_waiting_stops_soon_after_another_scenario_saw_a_turn_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Under --jobs 2 gemini-cli's sessions and turns scenarios both began with a prompt and
    # both waited the full 30 s; the second now stops once the first has timed out.
    from acp_conformance.catalogue import REQUIREMENTS
    from acp_conformance.scenarios import check_context
    from acp_conformance.scenarios.agent_run import SCENARIOS, RunEvidence, text_prompt
    from acp_conformance.scenarios.check_context import CheckContext
    from acp_conformance.scenarios.runtime import ScenarioRuntime

    monkeypatch.setattr(check_context, "HUNG_TURN_BOUND", 1.0)
    config = RunConfig(argv=raw_agent("--quirk", "model-hangs"), timeout=LONG_TIMEOUT)
    outcome: list[BaseException] = []

    async def scenario_pair() -> None:
        evidence = RunEvidence()
        async with anyio.create_task_group() as tg:
            first = ScenarioRuntime(config, SCENARIOS["sessions"], tg, evidence)
            second = ScenarioRuntime(config, SCENARIOS["turns"], tg, evidence)
            seen = CheckContext(first, REQUIREMENTS["session.load-replays-before-response"])
            waiting = CheckContext(second, REQUIREMENTS["prompt.text-accepted"])
            run = await waiting.agent()
            session_id = await waiting.new_session(run)

            async def prompt() -> None:
                try:
                    await waiting.prompt_turn(run, text_prompt(session_id, "hello"))
                except AgentTimeout as exc:
                    outcome.append(exc)

            async with anyio.create_task_group() as prompts:
                prompts.start_soon(prompt)
                await wait_all_tasks_blocked()  # the prompt is sent and its wait has begun
                assert run.frames[-1].message.get("method") == "session/prompt"
                seen.turn_hung(AgentTimeout("no response to session/prompt within 60 s"))
            await first.close()
            await second.close()
            tg.cancel_scope.cancel()

    async def bounded() -> None:
        with anyio.fail_after(RUN_BOUND):
            await scenario_pair()

    anyio.run(bounded)
    assert len(outcome) == 1 and "within 1 s" in str(outcome[0]), outcome
