"""``--cancel-prompt`` and ``--prompt``: the prompt texts the cancel and prompt-content checks
send, so they can drive an agent on its own model (the fixture takes its time only when a
prompt asks it to)."""

from __future__ import annotations

import pytest
from acp_conformance.cli import build_parser
from acp_conformance.outcomes import Verdict
from acp_conformance.run_result import RunResult

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker


def _prompts(result: RunResult) -> list[str]:
    texts = []
    for run in result.runs:
        for frame in run.frames:
            msg = frame.message
            is_prompt = isinstance(msg, dict) and msg.get("method") == "session/prompt"
            if frame.direction == "c2a" and is_prompt:
                texts.append(msg["params"]["prompt"][0]["text"])
    return texts


@pytest.mark.subprocess
def test_the_cancel_checks_send_the_given_prompt() -> None:
    busy = "Please take your time and list every prime below a million."
    result = run_checker(raw_agent(), only=["cancel.prompt-returns-cancelled"], cancel_prompt=busy)
    item = result.results["cancel.prompt-returns-cancelled"]
    assert item.verdict is Verdict.PASS, item.reason
    assert any(busy in text for text in _prompts(result))


@pytest.mark.subprocess
def test_a_cancel_prompt_the_agent_answers_at_once_is_not_applicable() -> None:
    result = run_checker(raw_agent(), only=["cancel.prompt-returns-cancelled"], cancel_prompt="Hi.")
    item = result.results["cancel.prompt-returns-cancelled"]
    assert item.verdict is Verdict.NOT_APPLICABLE and "before it could be cancelled" in item.reason


@pytest.mark.subprocess
def test_the_prompt_content_checks_send_the_given_text() -> None:
    result = run_checker(raw_agent(), only=["prompt.text-accepted"], prompt_text="Say hello.")
    assert result.results["prompt.text-accepted"].verdict is Verdict.PASS
    assert any("Say hello." in text for text in _prompts(result))


def test_the_command_line_takes_both_texts() -> None:
    args = build_parser().parse_args(
        ["run", "--cancel-prompt", "slow", "--prompt", "fast", "--", "agent"]
    )
    assert (args.cancel_prompt, args.prompt_text) == ("slow", "fast")
