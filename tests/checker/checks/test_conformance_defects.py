"""Each seeded defect of the raw fixture agent is blamed on the requirement it breaks, while
the correct fixture passes the same requirements."""

from __future__ import annotations

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.run_result import RunResult

from tests.checker.checks.conformance_checker_support import (
    LLM,
    LOADED_MACHINE_TIMEOUT,
    raw_agent,
    run_checker,
)

DEFECTS = {
    "wrong-id": "jsonrpc.id-echo",
    "update-after-response": "prompt.updates-before-response",
    "echo-version": "init.unsupported-version-not-echoed",
    "answer-notifications": "jsonrpc.notification-not-answered",
    "null-session-new": "session.new-returns-id",
    "silent-invalid-json": "jsonrpc.parse-error",
    "stdout-noise": "transport.stdout-only-json",
    "ignore-cancel": "cancel.prompt-returns-cancelled",
    "fs-without-capability": "gating.no-unadvertised-client-methods",
    "no-exit-on-eof": "shutdown.exits-on-stdin-eof",
    "crash-on-big-line": "robustness.oversized-line",
    "ignore-cancel-request": "cancel.cancel-request-prompt",
    "interleave-prompts": "prompt.one-turn-at-a-time",
    "crash-on-http-mcp": "session.new-unadvertised-mcp-transport",
    "extra-root-key": "schema.no-unknown-root-keys",
    "bad-current-mode": "modes.current-mode-valid",
    "boolean-option-always": "config.boolean-only-when-advertised",
    "terminal-auth-always": "gating.terminal-auth-advertised",
    "multiline-error": "jsonrpc.error-message-concise",
    "auth-required-without-methods": "session.new-without-auth-methods",
    "close-keeps-prompt": "session.close-cancels-prompt",
    "logout-fails": "auth.logout-works",
    "reject-null-meta": "ext.null-and-empty-tolerated",
    "elicit-without-capability": "gating.no-unadvertised-client-methods",
    "update-before-session-id": "prompt.updates-after-session-handed-out",
}
#: Defects only a turn driven by the scripted LLM can show.
NEEDS_LLM = {"interleave-prompts", "ignore-cancel-request", "ignore-cancel"}
# (ignore-cancel: under --llm none a cancel is judged on the agent's own model, as SHOULD;
# the scripted model's turn is the checker's, so there the failure is a MUST.)


@pytest.mark.subprocess
@pytest.mark.parametrize(("defect", "requirement"), sorted(DEFECTS.items()))
def test_seeded_defect_fails_its_requirement(defect: str, requirement: str) -> None:
    llm: dict[str, object] = (
        {"llm": "anthropic", "agent_env": [("FIXTURE_LLM_URL", "{llm_url}")]}
        if defect in NEEDS_LLM
        else {}
    )
    result = run_checker(raw_agent("--defect", defect), only=[requirement], **llm)
    item = result.results[requirement]
    assert item.verdict is Verdict.FAIL, (item.verdict, item.reason)
    # Only MUST and capability failures make the agent non-conformant.
    assert result.exit_code == (1 if item.requirement.blocking else 0)


#: Requirements about agents that advertise no auth methods (the correct fixture has one).
WITHOUT_AUTH = {"session.new-without-auth-methods"}


@pytest.mark.subprocess
def test_correct_fixture_passes_every_defect_requirement(correct_full_run: RunResult) -> None:
    judged = set(DEFECTS.values()) - WITHOUT_AUTH
    verdicts = {req: correct_full_run.results[req].verdict for req in judged}
    assert verdicts == dict.fromkeys(judged, Verdict.PASS)


@pytest.mark.subprocess
def test_correct_fixture_without_auth_methods_passes_their_requirements() -> None:
    result = run_checker(raw_agent("--quirk", "no-auth-methods"), only=sorted(WITHOUT_AUTH))
    assert {r.verdict for r in result.results.values()} == {Verdict.PASS}


@pytest.mark.subprocess
def test_correct_fixture_is_conformant_with_no_harness_errors(correct_full_run: RunResult) -> None:
    problems = {
        rid: (r.verdict.value, r.reason)
        for rid, r in correct_full_run.results.items()
        if r.verdict in (Verdict.FAIL, Verdict.HARNESS_ERROR)
    }
    assert problems == {}
    assert correct_full_run.status == "conformant"
    assert correct_full_run.exit_code == 0


@pytest.mark.subprocess
def test_prompt_turn_requirements_are_exercised_with_the_scripted_llm(
    correct_full_run: RunResult,
) -> None:
    turn = {
        rid: r.verdict for rid, r in correct_full_run.results.items() if rid.startswith("turn.")
    }
    assert turn and all(v is Verdict.PASS for v in turn.values()), turn


@pytest.mark.subprocess
def test_without_llm_prompt_turn_requirements_are_not_applicable() -> None:
    result = run_checker(raw_agent(), only=["turn.streamed-text", "cancel.during-tool-call"])
    assert {r.verdict for r in result.results.values()} == {Verdict.NOT_APPLICABLE}


@pytest.mark.subprocess
def test_an_agent_that_cannot_start_is_a_harness_error_not_a_failure() -> None:
    result = run_checker(["/nonexistent/acp-agent"], only=["session.new-returns-id"])
    assert result.aborted is not None
    assert result.aborted.verdict is Verdict.HARNESS_ERROR
    assert "could not be started" in result.aborted.outcome.reason
    assert result.status == "inconclusive"
    assert result.exit_code == 3


@pytest.mark.subprocess
def test_cancel_request_also_cancels_a_turn_without_a_model() -> None:
    # With no scripted LLM the fixture's slow prompt (SLOW_PROMPT) is what gets cancelled.
    result = run_checker(raw_agent(), only=["cancel.cancel-request-prompt"])
    item = result.results["cancel.cancel-request-prompt"]
    assert item.verdict is Verdict.PASS, item.reason
    assert "stopReason cancelled" in item.reason


@pytest.mark.subprocess
def test_schema_drawn_params_reach_the_http_mcp_crash() -> None:
    # hypothesis-jsonschema draws session/new params with http/sse MCP server entries, so
    # the fuzzer finds the crash without knowing about it.
    result = run_checker(
        raw_agent("--defect", "crash-on-http-mcp"),
        only=["robustness.fuzz-valid-params"],
        fuzz_examples=5,
    )
    item = result.results["robustness.fuzz-valid-params"]
    assert item.verdict is Verdict.FAIL
    assert "the agent died after session/new" in item.reason


@pytest.mark.subprocess
def test_prompt_turns_run_against_the_openai_compatible_scripted_llm() -> None:
    """``--llm openai`` drives the same tool and permission scenarios over Chat Completions."""
    result = run_checker(
        raw_agent(),
        only=["turn"],
        llm="openai",
        agent_env=[("FIXTURE_LLM_URL", "{llm_url}"), ("FIXTURE_LLM_API", "openai")],
    )
    verdicts = {req: item.verdict for req, item in result.results.items()}
    for requirement in (
        "turn.streamed-text",
        "turn.tool-call-lifecycle",
        "turn.permission-allow",
        "turn.permission-reject",
    ):
        assert verdicts[requirement] is Verdict.PASS, (
            requirement,
            result.results[requirement].reason,
        )


@pytest.mark.subprocess
@pytest.mark.parametrize("defect", ["ignore-cancel", "cancel-end-turn"])
def test_a_cancel_that_does_not_end_the_turn_cancelled_blocks_under_profile_acp(
    defect: str,
) -> None:
    # The cancelled turn's scripted model answers within 8 s (CANCELLED_TURN_SECONDS): an
    # agent that ignores the cancel ends it on its own, and its answer (end_turn) is judged
    # as the MUST it breaks, not as a wait that ran out (issue 36, item 2).
    result = run_checker(
        raw_agent("--defect", defect),
        only=["cancel.prompt-returns-cancelled"],
        llm="anthropic",
        agent_env=[("FIXTURE_LLM_URL", "{llm_url}")],
        profile="acp",
    )
    item = result.results["cancel.prompt-returns-cancelled"]
    assert item.verdict is Verdict.FAIL, (item.verdict, item.reason)
    assert item.requirement.tier.value == "MUST" and not item.softened
    assert "'end_turn'" in item.reason
    assert result.exit_code == 1


@pytest.mark.subprocess
def test_a_chunk_after_the_cancelled_answer_blocks_under_profile_acp() -> None:
    # The cut-turn family's "nothing after its end" on v1: judged after the prompt's answer,
    # while the answer itself (stopReason cancelled) is right.
    stop, after = "cancel.prompt-returns-cancelled", "cancel.no-updates-after-response"
    result = run_checker(
        raw_agent("--defect", "update-after-cancel"),
        only=[stop, after],
        timeout=LOADED_MACHINE_TIMEOUT,  # every answer comes; only the late chunk is wrong
        profile="acp",
        **LLM,
    )
    assert result.results[stop].verdict is Verdict.PASS, result.results[stop].reason
    item = result.results[after]
    assert item.verdict is Verdict.FAIL, (item.verdict, item.reason)
    assert item.requirement.tier.value == "MUST" and not item.softened
    assert "agent_message_chunk" in item.reason and "the answer of the cancelled" in item.reason
    assert result.exit_code == 1
