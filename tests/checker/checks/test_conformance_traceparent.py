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


def _stamped_prompts(result: object) -> list[dict[str, object]]:
    """The params of every session/prompt the run sent, across all its agent runs."""
    return [
        frame.message["params"]
        for run in result.runs  # type: ignore[attr-defined]
        for frame in run.recorder.frames
        if frame.direction == "c2a"
        and isinstance(frame.message, dict)
        and frame.message.get("method") == "session/prompt"
    ]


def test_every_prompt_carries_a_traceparent_and_each_is_judged() -> None:
    # A scenario of its own sends prompts too: with --traceparent they are traced as well.
    only = [RULE, "prompt.text-accepted"]
    config = RunConfig(argv=OWN_AGENT, only=only, llm="anthropic", traceparent=True, timeout=30)
    result = anyio.run(execute, config)
    prompts = _stamped_prompts(result)
    parents = [p["_meta"]["traceparent"] for p in prompts]  # type: ignore[index]
    assert len(prompts) >= 3 and len(set(parents)) == len(parents)  # fresh for each
    assert result.results[RULE].verdict is Verdict.PASS, _reasons(result)
    reasons = _reasons(result)
    assert "every answered prompt's trace was continued" in reasons
    counted = int(reasons.split("every answered prompt's trace was continued (")[1].split()[0])
    assert counted >= 2  # the probe's and the other scenario's


def test_an_agent_that_continues_no_trace_is_told_how_many_it_missed() -> None:
    result = run_checker(raw_agent(), only=[RULE, "prompt.text-accepted"], traceparent=True)
    assert result.results[RULE].verdict is Verdict.FAIL
    assert "answered prompts' traces were not continued" in _reasons(result)


def test_without_the_option_prompts_carry_no_traceparent() -> None:
    result = run_checker(raw_agent(), only=["prompt.text-accepted"])
    prompts = _stamped_prompts(result)
    assert prompts and not any("traceparent" in (p.get("_meta") or {}) for p in prompts)  # type: ignore[operator]


def test_a_prompt_s_own_traceparent_is_kept_and_others_get_a_fresh_one() -> None:
    from acp_conformance.trace_stamps import trace_ids, with_traceparent

    own = {"sessionId": "s", "_meta": {"traceparent": "00-" + "a" * 32 + "-" + "b" * 16 + "-01"}}
    assert with_traceparent(own) is own
    stamped = with_traceparent({"sessionId": "s", "_meta": {"k": 1}})
    assert stamped["_meta"]["k"] == 1 and trace_ids(stamped) is not None
    assert with_traceparent([1]) == [1]  # not an object: left as the check wrote it
    assert with_traceparent({"_meta": "odd"}) == {"_meta": "odd"}
    assert trace_ids(own) == ("a" * 32, "b" * 16)
    assert trace_ids({"_meta": {"traceparent": "nonsense"}}) is None
