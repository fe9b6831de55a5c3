"""Recall gaps and wrong SHOULD/INFO results against the official ACP test kit, each shown by
a seeded defect (``--defect``) or a correct behaviour the checker used to misjudge
(``--quirk``) of the raw fixture agent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from acp_conformance.harness.recorder import Frame
from acp_conformance.outcomes import Verdict
from acp_conformance.requirements import Tier

from tests.checker.checks.conformance_checker_support import (
    LLM,
    LOADED_MACHINE_TIMEOUT,
    raw_agent,
    run_checker,
)


@pytest.mark.subprocess
def test_an_agent_that_never_answers_custom_requests_fails_at_must() -> None:
    result = run_checker(
        raw_agent("--defect", "ignore-custom-requests"), only=["ext.custom-request-answered"]
    )
    item = result.results["ext.custom-request-answered"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert item.requirement.tier is Tier.MUST
    assert "never answered" in item.reason and "session/new sent after it" in item.reason
    assert result.exit_code == 1


@pytest.mark.subprocess
@pytest.mark.parametrize("quirks", [(), ("--quirk", "slow-unknown-requests")])
def test_custom_requests_answered_with_an_error_pass(quirks: tuple[str, ...]) -> None:
    result = run_checker(raw_agent(*quirks), only=["ext.custom-request-answered"])
    item = result.results["ext.custom-request-answered"]
    assert item.verdict is Verdict.PASS, item.reason


@pytest.mark.subprocess
def test_turn_updates_under_another_sessions_id_are_named_as_such() -> None:
    # The turn checks share one process and open a session each: the second prompt's text
    # goes out under the first session's id.
    result = run_checker(
        raw_agent("--defect", "cross-talk-updates"),
        only=[
            "prompt.text-accepted",
            "prompt.resource-link-accepted",
            "prompt.updates-name-prompted-session",
        ],
    )
    item = result.results["prompt.updates-name-prompted-session"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert "while only session" in item.reason and "prompt was running" in item.reason
    assert result.exit_code == 1


@pytest.mark.subprocess
def test_the_correct_fixture_keeps_each_turn_in_its_session() -> None:
    result = run_checker(
        raw_agent(),
        only=[
            "prompt.text-accepted",
            "prompt.resource-link-accepted",
            "prompt.updates-name-prompted-session",
        ],
    )
    item = result.results["prompt.updates-name-prompted-session"]
    assert item.verdict is Verdict.PASS, item.reason


@pytest.mark.subprocess
def test_no_mode_update_is_owed_after_the_clients_own_set_mode() -> None:
    result = run_checker(raw_agent("--quirk", "no-mode-update"), only=["modes.current-mode-update"])
    item = result.results["modes.current-mode-update"]
    assert item.verdict is Verdict.PASS, item.reason
    assert "none is required" in item.reason


@pytest.mark.subprocess
def test_any_error_rejects_an_unknown_auth_method() -> None:
    result = run_checker(
        raw_agent("--quirk", "auth-unknown-internal-error"),
        only=["auth.unknown-method-rejected"],
        profile="iac-code",
    )
    item = result.results["auth.unknown-method-rejected"]
    assert item.verdict is Verdict.PASS, item.reason
    assert "-32603" in item.reason


@pytest.mark.subprocess
def test_a_shell_call_that_failed_as_an_unknown_tool_is_not_reported_as_run() -> None:
    # Claude Code's tool names are unknown to the fixture: its Bash call ends failed.
    result = run_checker(
        raw_agent("--quirk", "unknown-tool-fails"),
        only=["turn.terminal-delegation"],
        tools="claude-agent-acp",
        **LLM,  # type: ignore[arg-type]
    )
    item = result.results["turn.terminal-delegation"]
    assert item.verdict is Verdict.NOT_APPLICABLE, item.reason
    assert "ended failed" in item.reason and "the command ran without" not in item.reason


@pytest.mark.subprocess
def test_an_error_sent_without_the_requests_id_is_named_so() -> None:
    result = run_checker(
        raw_agent("--quirk", "null-id-errors"), only=["jsonrpc.invalid-params"], profile="iac-code"
    )
    item = result.results["jsonrpc.invalid-params"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert "id null arrived instead" in item.reason
    # A wrong answer, not a late one: it keeps its tier.
    assert item.requirement.tier is Tier.MUST


def test_session_delete_is_stable_acp_not_a_house_rule() -> None:
    from acp_conformance.catalogue import REQUIREMENTS

    req = REQUIREMENTS["session.delete-works"]
    assert not req.house
    assert "agentclientprotocol.com/protocol/session-delete" in req.reference


@pytest.mark.subprocess
def test_a_null_session_load_result_is_a_should_not_a_must() -> None:
    result = run_checker(
        raw_agent("--quirk", "null-load-result"),
        only=["session.load-replays-before-response", "schema.agent-messages-valid"],
    )
    item = result.results["schema.agent-messages-valid"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert item.requirement.tier is Tier.SHOULD
    assert "result null" in item.reason
    assert result.results["session.load-replays-before-response"].verdict is Verdict.PASS
    assert result.exit_code == 0


def _cancelled_during_a_permission_request(quirk: str) -> list[Frame]:
    """The cancel scenario's frames for the raw fixture with ``quirk``, once
    ``cancel.during-tool-call`` passed on it."""
    result = run_checker(
        raw_agent("--quirk", quirk),
        only=["cancel.during-tool-call"],
        timeout=LOADED_MACHINE_TIMEOUT,
        **LLM,
    )
    item = result.results["cancel.during-tool-call"]
    assert item.verdict is Verdict.PASS, item.reason
    assert "while the permission request was pending" in item.reason
    return next(r for r in result.runs if r.scenario == "cancel").frames


def _sent(frames: list[Frame], what: Callable[[dict[str, Any]], bool]) -> list[Frame]:
    return [f for f in frames if isinstance(f.message, dict) and what(f.message)]


@pytest.mark.subprocess
def test_cancel_during_a_permission_request_is_judged_on_an_agent_that_reads_before_writing() -> (
    None
):
    # gemini-cli reads a file through fs/read_text_file before writing it and gives
    # the write up, unasked, when it is missing: the check runs the turn again on a file that
    # exists, so the MUST is exercised on it instead of "not applicable".
    frames = _cancelled_during_a_permission_request("reads-before-write")
    reads = _sent(frames, lambda m: m.get("method") == "fs/read_text_file")
    assert len(reads) == 2  # the new file, then the one the checker wrote first


@pytest.mark.subprocess
def test_a_cancel_during_a_permission_request_answers_that_request_cancelled() -> None:
    # A v1 client that cancels MUST answer the pending permission request "cancelled"; an agent
    # that waits for that answer before ending its turn (gemini-cli does) is conformant, and
    # the checker used to leave it waiting 30 s and fail it.
    frames = _cancelled_during_a_permission_request("awaits-permission-answer")
    cancelled = _sent(frames, lambda m: m.get("result") == {"outcome": {"outcome": "cancelled"}})
    (cancel,) = _sent(frames, lambda m: m.get("method") == "session/cancel")
    assert len(cancelled) == 1 and cancelled[0].direction == "c2a"
    assert cancelled[0].seq > cancel.seq
