"""``acp-conformance run --traceparent``: the INFO rule on trace context, against real agents.

Our own agent (with its otel extra) continues the prompt's trace through the OTLP receiver
the run starts; the raw fixture agent exports nothing and gets a readable failure; without
the option the rule is not applicable.
"""

from __future__ import annotations

import os
import sys

import anyio
import pytest
from acp_conformance import cli
from acp_conformance.config import RunConfig, UsageError
from acp_conformance.outcomes import Verdict
from acp_conformance.runner import execute

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker

pytestmark = pytest.mark.subprocess

RULE = "ext.traceparent-continued"
OWN_AGENT = [sys.executable, "-m", "iac_code.cli", "acp"]


def _reasons(result: object, rule: str = RULE) -> str:
    item = result.results[rule]  # type: ignore[attr-defined]
    return " | ".join(outcome.reason for outcome in item.outcomes)


@pytest.fixture(autouse=True)
def no_inherited_otel(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [key for key in os.environ if key.startswith("OTEL_")]:
        monkeypatch.delenv(name)


def test_our_agent_continues_the_prompts_trace() -> None:
    # The agent's first prompt loads its model SDK: a longer bound than the fixtures need.
    config = RunConfig(argv=OWN_AGENT, only=[RULE], llm="anthropic", traceparent=True, timeout=30)
    result = anyio.run(execute, config)
    assert result.results[RULE].verdict is Verdict.PASS, _reasons(result)
    assert "invoke_agent iac-code" in _reasons(result)


def test_an_agent_that_exports_nothing_is_told_so() -> None:
    result = run_checker(raw_agent(), only=[RULE], traceparent=True)
    assert result.results[RULE].verdict is Verdict.FAIL
    assert "no span reached the OTLP receiver" in _reasons(result)


def test_without_the_option_the_rule_does_not_apply() -> None:
    result = run_checker(raw_agent(), only=[RULE])
    assert result.results[RULE].verdict is Verdict.NOT_APPLICABLE
    assert "--traceparent" in _reasons(result)


def test_the_option_without_the_extra_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "opentelemetry.proto" else real(name, *a),
    )
    with pytest.raises(UsageError, match=r"acp-conformance\[otel\]"):
        cli._traceparent_option(True)
