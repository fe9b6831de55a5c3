"""Turn checks share one warmed-up agent process per scenario, and a check that goes wrong
leaves the next one a fresh process (see ``ScenarioRuntime.turn_agent``)."""

from __future__ import annotations

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.run_result import RunResult
from acp_scripted_llm import ScriptedLLMServer
from acp_scripted_llm.script import SIDE_CALL_TURN, Script

from tests.checker.checks.conformance_checker_support import LLM, raw_agent, run_checker

MARKER = "[acp-conformance]"


def _run_ids(result: RunResult, *requirements: str) -> dict[str, set[str | None]]:
    return {
        rid: {outcome.run_id for outcome in result.results[rid].outcomes} for rid in requirements
    }


@pytest.mark.subprocess
def test_passing_turn_checks_share_one_process() -> None:
    checks = [
        "prompt.text-accepted",
        "turn.streamed-text",
        "turn.thinking",
        "turn.permission-allow",
    ]
    result = run_checker(raw_agent(), only=checks, **LLM)  # type: ignore[arg-type]
    assert {r.verdict for r in result.results.values()} == {Verdict.PASS}, {
        rid: r.reason for rid, r in result.results.items()
    }
    used = set().union(*_run_ids(result, *checks).values())
    assert len(used) == 1, used
    turn_runs = [run for run in result.runs if run.scenario == "turns"]
    assert len(turn_runs) == 1


@pytest.mark.subprocess
def test_a_failed_check_hands_the_next_one_a_fresh_process() -> None:
    # The defect ignores the cancel (the turn ends 3 s later as if nothing happened); the
    # next check must not inherit that process.
    checks = ["cancel.prompt-returns-cancelled", "cancel.cancel-request-prompt"]
    result = run_checker(raw_agent("--defect", "ignore-cancel"), only=checks)
    assert result.results[checks[0]].verdict is Verdict.FAIL
    ids = _run_ids(result, *checks)
    assert ids[checks[0]].isdisjoint(ids[checks[1]]), ids


@pytest.mark.subprocess
def test_a_title_call_that_starts_with_the_marker_does_not_take_the_scripted_turn() -> None:
    # opencode quotes the prompt first in a tool-less title call; the turn agent's warm-up
    # turn shows that the agent offers tools, so such calls are side calls from then on.
    checks = [
        "turn.streamed-text",
        "turn.thinking",
        "turn.tool-call-lifecycle",
        "cancel.prompt-returns-cancelled",
        "prompt.one-turn-at-a-time",
    ]
    result = run_checker(raw_agent("--quirk", "marker-title-calls"), only=checks, **LLM)  # type: ignore[arg-type]
    verdicts = {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
    assert {v for v, _ in verdicts.values()} == {Verdict.PASS}, verdicts


@pytest.mark.subprocess
def test_a_late_call_for_an_earlier_session_does_not_take_the_next_checks_turn() -> None:
    # The agent calls the model for the previous prompt's conversation (with tools) just
    # before the next prompt's own call: it quotes the other session's tag, so it is a side
    # call and the next check still gets its scripted turn.
    checks = ["turn.streamed-text", "turn.thinking", "turn.tool-call-lifecycle"]
    result = run_checker(raw_agent("--quirk", "late-calls"), only=checks, **LLM)  # type: ignore[arg-type]
    verdicts = {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
    assert {v for v, _ in verdicts.values()} == {Verdict.PASS}, verdicts


def _call(text: str, *, tools: bool) -> dict[str, object]:
    body: dict[str, object] = {"messages": [{"role": "user", "content": text}]}
    if tools:
        body["tools"] = [{"name": "write_file", "input_schema": {"type": "object"}}]
    return body


def test_the_next_script_routes_with_what_the_last_one_learned() -> None:
    with ScriptedLLMServer() as server:
        server.script.route_to(MARKER)
        server.script.next_turn(_call(f"{MARKER} warm up", tools=True))
        following = server.next_script(["scripted answer"])
        assert server.script is following
        title = following.next_turn(_call(f"{MARKER} hello. Give this a title.", tools=False))
        assert title == SIDE_CALL_TURN and following.routed == 0
        main = following.next_turn(_call(f"{MARKER} hello", tools=True))
        assert main["content"][0]["text"] == "scripted answer" and following.routed == 1


def test_a_script_bound_to_a_session_serves_only_calls_quoting_its_tag() -> None:
    script = Script(["mine"])
    script.route_to(MARKER)
    script.await_session()
    assert script.next_turn(_call(f"{MARKER} early (tag-a)", tools=True)) == SIDE_CALL_TURN
    script.serve_only("(tag-b)")
    assert script.next_turn(_call(f"{MARKER} late (tag-a)", tools=True)) == SIDE_CALL_TURN
    assert script.next_turn(_call(f"{MARKER} go (tag-b)", tools=True))["content"][0]["text"] == (
        "mine"
    )


def test_a_script_that_learned_nothing_still_routes_by_the_marker() -> None:
    earlier = Script()
    earlier.route_to(MARKER)
    following = Script(["first"])
    following.continue_routing(earlier)
    assert following.next_turn(_call(f"{MARKER} hi", tools=False))["content"][0]["text"] == "first"
    assert following.next_turn(_call("Summarise this", tools=False)) == SIDE_CALL_TURN


def test_checks_that_leave_state_behind_run_last_in_their_scenario() -> None:
    from acp_conformance.catalogue import CHECKS

    def order(scenario: str) -> list[str]:
        return [chk.requirement for chk in CHECKS if chk.scenario == scenario]

    # Only a text turn may follow a remembered allow_always, and the loads after a restart
    # stop the turn agent; an unanswered permission request retires the process, so it goes
    # last too.
    assert order("turns")[-3:] == [
        "turn.allow-always-remembered",
        "turn.fork-keeps-history",
        "turn.load-replay-fidelity",
    ]
    assert order("cancel")[-1] == "cancel.during-tool-call"


@pytest.mark.subprocess
def test_a_failed_warm_up_is_not_repeated_for_every_check() -> None:
    # The scripted model runs, but every prompt of this agent fails: each check reports its
    # own failure, and only the first turn agent spends a warm-up turn on it.
    checks = ["turn.streamed-text", "turn.thinking"]
    result = run_checker(raw_agent("--quirk", "model-unreachable"), only=checks, llm="anthropic")
    for rid in checks:
        item = result.results[rid]
        assert item.verdict is Verdict.FAIL and "the prompt failed" in item.reason, item.reason
    prompts = [
        frame
        for run in result.runs
        if run.scenario == "turns"
        for frame in run.frames
        if frame.direction == "c2a"
        and isinstance(frame.message, dict)
        and frame.message.get("method") == "session/prompt"
    ]
    assert len(prompts) == len(checks) + 1  # one warm-up, then one prompt per check
