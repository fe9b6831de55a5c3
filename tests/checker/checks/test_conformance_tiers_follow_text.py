"""Tiers follow the text: a requirement blocks (MUST or CAPABILITY under ``--profile acp``)
only when the phrase it cites carries MUST / MUST NOT / REQUIRED / SHALL, or its citation
says the published schema requires the shape. Fields a published ACP schema defines or once
defined are not custom root fields, waits the spec sets no limit for are not MUST failures,
and neither is a turn on a model the checker does not control."""

from __future__ import annotations

import json
import re

import pytest
from acp_conformance import run_result
from acp_conformance.catalogue import REQUIREMENTS
from acp_conformance.citations import SCHEMA_REQUIRES
from acp_conformance.judges.consistency import PUBLISHED_RESULT_FIELDS
from acp_conformance.outcomes import NO_DEADLINE, Verdict, failed, passed, soft_failed
from acp_conformance.requirements import Tier, effective
from acp_schema import reference

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker

NORMATIVE = re.compile(r"\b(MUST|MUST NOT|REQUIRED|SHALL)\b")
REFERENCE = reference.reference_dir()


def cited_phrases(reference: str) -> list[str]:
    """The quoted key phrases of a citation (each part of it is ``source: "phrase"``)."""
    phrases = []
    for part in reference.split("; "):
        if ': "' in part:
            phrases.append(part.split(': "', 1)[1])
    return phrases


def has_textual_basis(reference: str) -> bool:
    return SCHEMA_REQUIRES in reference or any(
        NORMATIVE.search(p) for p in cited_phrases(reference)
    )


def test_every_blocking_requirement_cites_a_normative_phrase_or_the_schema() -> None:
    unfounded = {
        req.id: req.reference
        for req in REQUIREMENTS.values()
        if effective(req, "acp").blocking and not has_textual_basis(req.reference)
    }
    assert unfounded == {}


def test_the_basis_detector_rejects_descriptive_phrases() -> None:
    assert not has_textual_basis('https://x (Session ID): "a unique identifier for the session"')
    assert has_textual_basis('https://x (Session ID): "The Agent MUST respond with a unique id"')
    assert has_textual_basis(f"https://x (Schema): {SCHEMA_REQUIRES}: Error.code")


def test_stricter_rules_without_such_a_phrase_block_only_as_house_rules() -> None:
    for req in REQUIREMENTS.values():
        if req.blocking and not has_textual_basis(req.reference):
            assert req.house, req.id
            assert effective(req, "acp").tier is Tier.SHOULD, req.id


def test_every_published_field_not_marked_removed_is_in_a_published_schema() -> None:
    reference.require(REFERENCE / "README.md")  # skips, or fails under ACP_REFERENCE_REQUIRED=1
    names = {
        "session/new": "NewSessionResponse",
        "session/load": "LoadSessionResponse",
        "session/resume": "ResumeSessionResponse",
        "session/fork": "ForkSessionResponse",
        "session/prompt": "PromptResponse",
        "initialize": "InitializeResponse",
    }
    published: dict[str, set[str]] = {}
    for path in REFERENCE.rglob("schema*.json"):
        defs = json.loads(path.read_text(encoding="utf-8")).get("$defs", {})
        for method, name in names.items():
            published.setdefault(method, set()).update(defs.get(name, {}).get("properties") or {})
    missing = {
        (method, field)
        for method, fields in PUBLISHED_RESULT_FIELDS.items()
        for field, where in fields.items()
        if not where.startswith("removed") and field not in published.get(method, set())
    }
    assert missing == set()


@pytest.mark.subprocess
def test_acps_own_removed_models_field_is_a_should_not_a_custom_field() -> None:
    result = run_checker(
        raw_agent("--quirk", "upstream-models-field"), only=["schema.no-unknown-root-keys"]
    )
    item = result.results["schema.no-unknown-root-keys"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert item.requirement.tier is Tier.SHOULD
    assert "removed/unstable upstream field" in item.reason and "models" in item.reason
    assert result.exit_code == 0


@pytest.mark.subprocess
def test_a_custom_root_field_still_fails_at_must() -> None:
    result = run_checker(
        raw_agent("--defect", "extra-root-key"), only=["schema.no-unknown-root-keys"]
    )
    item = result.results["schema.no-unknown-root-keys"]
    assert item.verdict is Verdict.FAIL and item.requirement.tier is Tier.MUST, item.reason
    assert "vendorModels" in item.reason
    assert result.exit_code == 1


def test_a_requirement_whose_every_failure_is_soft_reports_should() -> None:
    req = REQUIREMENTS["jsonrpc.id-echo"]
    soft = run_result.judged(req, [soft_failed("no answer within 3 s", NO_DEADLINE), passed("ok")])
    assert soft.verdict is Verdict.FAIL and soft.requirement.tier is Tier.SHOULD
    assert NO_DEADLINE in soft.reason
    hard = run_result.judged(req, [soft_failed("late", NO_DEADLINE), failed("wrong id")])
    assert hard.requirement.tier is Tier.MUST


@pytest.mark.subprocess
def test_a_cancel_on_the_agents_own_model_is_not_a_must_failure() -> None:
    # Under --llm none the turn that gets cancelled runs on the agent's own model (gemini-cli
    # retried an unreachable one for 51 s): its late or missing answer is judged as SHOULD.
    result = run_checker(
        raw_agent("--defect", "ignore-cancel"), only=["cancel.prompt-returns-cancelled"]
    )
    item = result.results["cancel.prompt-returns-cancelled"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert item.requirement.tier is Tier.SHOULD
    assert "own model" in item.reason
    assert result.exit_code == 0


@pytest.mark.subprocess
def test_tool_calls_replayed_under_new_ids_are_a_should() -> None:
    result = run_checker(
        raw_agent("--quirk", "replay-new-tool-ids"),
        only=["turn.load-replay-fidelity"],
        llm="anthropic",
        agent_env=[("FIXTURE_LLM_URL", "{llm_url}")],
    )
    item = result.results["turn.load-replay-fidelity"]
    assert item.verdict is Verdict.FAIL, item.reason
    assert "new ids" in item.reason and item.requirement.tier is Tier.SHOULD
    assert result.exit_code == 0
