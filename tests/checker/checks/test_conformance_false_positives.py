"""Correct behaviours the checker used to misjudge, each shown by a quirk of the raw fixture
agent (``--quirk NAME``): the requirement that once failed now passes (or is n/a)."""

from __future__ import annotations

import pytest
from acp_conformance.outcomes import Verdict

from tests.checker.checks.conformance_checker_support import LLM, raw_agent, run_checker


@pytest.mark.subprocess
def test_an_answer_to_the_undecodable_probe_line_is_not_a_stray_response() -> None:
    result = run_checker(
        raw_agent("--quirk", "lenient-utf8"),
        only=["robustness.invalid-utf8", "jsonrpc.one-response-per-request"],
    )
    item = result.results["jsonrpc.one-response-per-request"]
    assert item.verdict is Verdict.PASS, item.reason


@pytest.mark.subprocess
def test_a_load_result_naming_the_loaded_session_hands_nothing_out() -> None:
    # turn.load-replay-fidelity loads the session in a fresh process, which never handed the
    # id out: the replay names the id the client asked for, before the load result.
    result = run_checker(
        raw_agent("--quirk", "load-names-session"),
        only=["turn.load-replay-fidelity", "prompt.updates-name-known-session"],
        **LLM,  # type: ignore[arg-type]
    )
    item = result.results["prompt.updates-name-known-session"]
    assert item.verdict is Verdict.PASS, item.reason
    assert result.results["turn.load-replay-fidelity"].verdict is Verdict.PASS


@pytest.mark.subprocess
def test_mode_and_config_methods_are_not_probed_when_not_advertised() -> None:
    result = run_checker(
        raw_agent("--quirk", "no-modes"), only=["session.unknown-id-rejected"], profile="iac-code"
    )
    item = result.results["session.unknown-id-rejected"]
    assert item.verdict is Verdict.PASS, item.reason
    assert "set_mode" not in item.reason


@pytest.mark.subprocess
def test_side_calls_to_the_model_get_a_neutral_answer_and_keep_the_script_aligned() -> None:
    result = run_checker(
        raw_agent("--quirk", "side-calls"),
        only=["turn.streamed-text", "turn.tool-call-lifecycle", "cancel.prompt-returns-cancelled"],
        **LLM,  # type: ignore[arg-type]
    )
    verdicts = {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
    assert {v for v, _ in verdicts.values()} == {Verdict.PASS}, verdicts


@pytest.mark.subprocess
def test_cancel_checks_are_not_applicable_when_the_slow_model_turn_never_started() -> None:
    # The scripted LLM runs, but the fixture is not pointed at it: no model call happens.
    result = run_checker(raw_agent(), llm="anthropic", only=["cancel.prompt-returns-cancelled"])
    item = result.results["cancel.prompt-returns-cancelled"]
    assert item.verdict is Verdict.NOT_APPLICABLE, item.reason
    assert "never made the slow model call" in item.reason


@pytest.mark.subprocess
def test_the_fuzzer_leaves_mode_and_config_methods_alone_when_not_offered() -> None:
    result = run_checker(
        raw_agent("--quirk", "no-modes"), only=["robustness.fuzz-valid-params"], fuzz_examples=2
    )
    item = result.results["robustness.fuzz-valid-params"]
    assert item.verdict is Verdict.PASS, item.reason
    sent = {
        f.message.get("method")
        for run in result.runs
        for f in run.frames
        if f.direction == "c2a" and isinstance(f.message, dict)
    }
    assert "session/new" in sent
    assert not sent & {"session/set_mode", "session/set_config_option"}


@pytest.mark.subprocess
def test_under_llm_none_a_prompt_failing_on_the_unreachable_model_is_not_applicable() -> None:
    result = run_checker(
        raw_agent("--quirk", "model-unreachable"),
        only=["prompt.text-accepted", "prompt.resource-link-accepted"],
    )
    for item in result.results.values():
        assert item.verdict is Verdict.NOT_APPLICABLE, item.reason
        assert "model is unreachable" in item.reason


@pytest.mark.subprocess
def test_a_late_answer_to_the_barrier_is_not_an_answer_to_the_next_notification() -> None:
    result = run_checker(
        raw_agent("--quirk", "slow-unknown-requests"),
        only=["cancel.cancel-request-unknown-ignored", "ext.unknown-notification-ignored"],
    )
    for item in result.results.values():
        assert item.verdict is Verdict.PASS, item.reason


@pytest.mark.subprocess
def test_an_agent_that_echoes_versions_fails_once_not_once_per_version_check() -> None:
    # The official Python SDK's example agent echoes any version. That is one MUST failure
    # (init.unsupported-version-not-echoed); its "2" must not also be judged as v2 (four
    # version.v2-* failures), nor its 65535 run break the schema checks (harness errors).
    result = run_checker(
        raw_agent("--defect", "echo-version"), only=["init.", "version.", "schema."]
    )
    blocking = {r.requirement.id for r in result.blocking_failures}
    assert blocking == {"init.unsupported-version-not-echoed"}, blocking
    assert not result.harness_errors
    for rid in ("version.v2-negotiation", "version.v2-session-new", "version.v2-removed-methods"):
        item = result.results[rid]
        assert item.verdict is Verdict.NOT_APPLICABLE and "echoes" in item.reason, item.reason


@pytest.mark.subprocess
def test_prompts_that_hang_on_an_unreachable_model_are_not_failures_under_llm_none() -> None:
    # gemini-cli retries an unreachable model until cancelled. Under --llm none that says
    # nothing about ACP, so prompt-driven checks are n/a; the cancel is still judged.
    hanging = ["session.load-replays-before-response", "prompt.text-accepted"]
    gated = "gating.no-unadvertised-client-methods"  # also judged over all traffic: passes
    result = run_checker(
        raw_agent("--quirk", "model-hangs"),
        only=[*hanging, gated, "cancel.prompt-returns-cancelled"],
    )
    for rid in hanging:
        item = result.results[rid]
        assert item.verdict is Verdict.NOT_APPLICABLE, (rid, item.reason)
        assert "unreachable" in item.reason, item.reason
    turn_outcome = next(o for o in result.results[gated].outcomes if o.run_id == "baseline#1")
    assert turn_outcome.verdict is Verdict.NOT_APPLICABLE, turn_outcome.reason
    assert result.results[gated].verdict is Verdict.PASS
    assert result.results["cancel.prompt-returns-cancelled"].verdict is Verdict.PASS


@pytest.mark.subprocess
def test_a_cancel_that_is_never_answered_fails_once() -> None:
    result = run_checker(
        raw_agent("--defect", "ignore-cancel"),
        only=["cancel.prompt-returns-cancelled", "cancel.no-updates-after-response"],
    )
    assert result.results["cancel.prompt-returns-cancelled"].verdict is Verdict.FAIL
    after = result.results["cancel.no-updates-after-response"]
    assert after.verdict is Verdict.NOT_APPLICABLE, after.reason


@pytest.mark.subprocess
def test_a_mode_refused_for_a_reason_of_the_agents_own_is_not_a_failure() -> None:
    # gemini-cli refuses its auto-approving modes in an untrusted folder: setting the
    # current mode still shows set_mode works, and with no other mode to switch to there is
    # no current_mode_update to expect.
    result = run_checker(
        raw_agent("--quirk", "refuse-read-only"),
        only=["modes.set-mode-works", "modes.current-mode-update"],
    )
    works = result.results["modes.set-mode-works"]
    assert works.verdict is Verdict.PASS and "refused first: read_only" in works.reason
    update = result.results["modes.current-mode-update"]
    assert update.verdict is Verdict.NOT_APPLICABLE, update.reason


@pytest.mark.subprocess
def test_an_error_without_an_id_member_is_named_so_not_called_missing() -> None:
    # codex-acp answers a broken line with an error that has no id member: the parse-error
    # check said no error response came at all.
    result = run_checker(raw_agent("--defect", "idless-errors"), only=["jsonrpc.parse-error"])
    item = result.results["jsonrpc.parse-error"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert "has no id member" in item.reason, item.reason


@pytest.mark.subprocess
def test_a_parse_error_sent_after_later_answers_still_counts() -> None:
    # The grace after the later request's answer is scaled to its round trip (ms here) but
    # never below 0.5 s: an error 0.2 s late is still the line's answer.
    result = run_checker(raw_agent("--quirk", "late-parse-errors"), only=["jsonrpc.parse-error"])
    item = result.results["jsonrpc.parse-error"]
    assert item.verdict is Verdict.PASS, item.reason
