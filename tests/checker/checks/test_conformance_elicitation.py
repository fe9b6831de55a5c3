"""v2 elicitation provoked in one scenario (issue 36, item 4): the checker advertises form and
URL elicitation, the scripted model calls the agent's asking tool, the checker answers and
validates each elicitation/create (and elicitation/complete) against the v2 schema.

The raw v2 fixture asks one form and one URL question; its seeded defect sends a form without
its requestedSchema. Our own agent asks forms through ``ask_user``; an agent whose vocabulary
names no asking tool gets not-applicable with the reason. The questions also go through the
requires_action judge, which covers elicitations as well as permission requests."""

from __future__ import annotations

import sys

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.v2_drafts import NEWEST

from tests.checker.checks.conformance_checker_support import (
    LOADED_MACHINE_TIMEOUT,
    WITH_MODEL,
    raw_v2_agent,
    run_checker,
    verdicts,
)

pytestmark = pytest.mark.subprocess

RULE = "version.v2-elicitation-requests"
BLOCKED = ["version.v2-requires-action-while-asked", "version.v2-requires-action-resumes"]
OPTIONS = {**WITH_MODEL, "v2_draft": NEWEST}
OWN_AGENT = [sys.executable, "-m", "iac_code.cli", "acp"]


def test_the_fixtures_form_and_url_questions_pass_and_are_framed_by_requires_action() -> None:
    # The run-wide gating judge reads the v2 client's capabilities: advertised, not a failure.
    gating = "gating.no-unadvertised-client-methods"
    judged = verdicts(
        run_checker(
            raw_v2_agent(),
            only=[RULE, *BLOCKED, gating],
            timeout=LOADED_MACHINE_TIMEOUT,  # the correct fixture: nothing goes unanswered
            **OPTIONS,
        )
    )
    assert judged[gating][0] is not Verdict.FAIL, judged
    del judged[gating]
    assert {v for v, _ in judged.values()} == {Verdict.PASS}, judged
    assert "form, url mode" in judged[RULE][1]


def test_a_form_without_its_schema_fails() -> None:
    result = run_checker(raw_v2_agent("--defect", "bad-elicitation"), only=[RULE], **OPTIONS)
    verdict, reason = verdicts(result)[RULE]
    assert verdict is Verdict.FAIL, reason
    assert reason.startswith("elicitation/create:") and "requestedSchema" in reason


def test_a_vocabulary_without_an_asking_tool_is_not_applicable() -> None:
    result = run_checker(raw_v2_agent(), only=[RULE], tools="qwen-code", **OPTIONS)
    verdict, reason = verdicts(result)[RULE]
    assert verdict is Verdict.NOT_APPLICABLE
    assert "names no tool that asks the user" in reason


def test_our_agent_asks_a_valid_form_and_reports_requires_action() -> None:
    # The agent's first prompt loads its model SDK: a longer bound than the fixtures need.
    judged = verdicts(run_checker(OWN_AGENT, only=[RULE, *BLOCKED], llm="anthropic", timeout=30))
    assert {v for v, _ in judged.values()} == {Verdict.PASS}, judged
    assert "form mode" in judged[RULE][1]
