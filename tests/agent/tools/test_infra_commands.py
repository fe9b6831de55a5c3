"""The infrastructure-changing command classifier (SPEC §6) and the policy around it.

The corpus (``data/infra_commands.jsonl``) holds changing and read-only commands of every
tool family the issue names, evasions through shell syntax and wrappers, and commands the
parser cannot read (which count as changing). Every case must be classified as labelled.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from iac_code.tools.bash import BashTool
from iac_code.tools.contract import Access, AccessKind, ToolContext
from iac_code.tools.infra_commands import classify_command
from iac_code.tools.permissions import (
    PermissionMemory,
    decide,
    declined_outcome,
    interpret_permission_response,
    permission_options,
)

CORPUS = Path(__file__).parent / "data" / "infra_commands.jsonl"


def load_corpus() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


def test_the_corpus_is_classified_without_a_miss() -> None:
    cases = load_corpus()
    counts: Counter[str] = Counter()
    misses: list[str] = []
    for case in cases:
        counts[f"{case['family']} {case['expect']}"] += 1
        changing = classify_command(case["command"]) is not None
        if changing != (case["expect"] == "change"):
            misses.append(f"{case['family']}: {case['command']!r} expected {case['expect']}")
    report = "\n".join(f"{key}: {n}" for key, n in sorted(counts.items()))
    print(f"\n{len(cases)} commands, {len(misses)} misses\n{report}")
    assert misses == []
    assert len(cases) >= 300
    families = {case["family"] for case in cases}
    for family in families - {"evasion", "unreadable", "everyday"}:
        # every tool family has both kinds, so neither "flag everything" nor "flag nothing"
        # could pass
        assert counts[f"{family} change"] and counts[f"{family} safe"], family
    assert counts["evasion change"] >= 80 and counts["unreadable change"] >= 20


@pytest.mark.parametrize(
    ("command", "summary"),
    [
        ("terraform -chdir=prod destroy -auto-approve", "terraform destroy"),
        ("sudo env X=1 timeout 9 /usr/bin/tofu state rm a.b", "tofu state rm"),
        ("bash -c 'kubectl -n p delete ns p'", "kubectl delete"),
        ("aws ec2 terminate-instances --instance-ids i-1", "aws ec2 terminate-instances"),
    ],
)
def test_the_summary_names_what_was_recognised(command: str, summary: str) -> None:
    change = classify_command(command)
    assert change is not None and change.summary == summary


def test_an_unreadable_command_says_why() -> None:
    change = classify_command('echo "open quote')
    assert change is not None and change.family == "unreadable"
    assert "cannot be read" in change.summary


def test_deep_nesting_counts_as_changing() -> None:
    command = "true"
    for _ in range(12):
        command = f"bash -c {json.dumps(command)}"
    change = classify_command(command)
    assert change is not None and change.family == "unreadable"


# --- the policy -------------------------------------------------------------------------------

INFRA = Access(kind=AccessKind.EXECUTE, paths=("/w",), infra_change="terraform destroy")


@pytest.mark.parametrize("mode", ["default", "accept_edits"])
def test_an_infra_change_asks_despite_allow_always(mode: str) -> None:
    memory = PermissionMemory()
    memory.remember("bash", "allow_always")
    decision = decide("bash", INFRA, mode, memory)
    assert decision.needs_asking
    assert decision.reason == "changes real infrastructure: terraform destroy"


def test_an_infra_change_is_refused_in_read_only_and_by_reject_always() -> None:
    assert decide("bash", INFRA, "read_only").denied
    memory = PermissionMemory()
    memory.remember("bash", "reject_always")
    assert decide("bash", INFRA, "default", memory).denied


def test_an_infra_change_offers_only_allow_once_and_reject() -> None:
    options = permission_options(INFRA)
    assert [o["kind"] for o in options] == ["allow_once", "reject_once"]
    # An "always" answer was not offered, so it allows nothing and is never remembered.
    verdict = interpret_permission_response(
        {"outcome": {"outcome": "selected", "optionId": "allow_always"}}, options
    )
    assert not verdict.allowed and verdict.remember is None
    once = interpret_permission_response(
        {"outcome": {"outcome": "selected", "optionId": "allow_once"}}, options
    )
    assert once.allowed and once.remember is None


def test_the_refusal_tells_the_model_what_to_do() -> None:
    outcome = declined_outcome("bash", "the client could not be asked", INFRA)
    assert outcome.is_error
    text = outcome.model_content
    assert "changes real infrastructure (terraform destroy)" in text
    assert "could not be asked" in text and "Show the user the exact command" in text
    assert outcome.raw_output["infraChange"] == "terraform destroy"


@pytest.mark.anyio
async def test_bash_titles_and_access_mark_the_change(tmp_path: Path) -> None:
    tool = BashTool()
    ctx = ToolContext.for_session(tmp_path)
    command = {"command": "terraform destroy -auto-approve"}
    assert tool.title(command) == "Changes real infrastructure: terraform destroy -auto-approve"
    assert (await tool.access(command, ctx)).infra_change == "terraform destroy"
    harmless = {"command": "terraform plan"}
    assert tool.title(harmless) == "Run terraform plan"
    assert (await tool.access(harmless, ctx)).infra_change is None
