"""``--v2-draft``: every v2 rule names its drafts, and a run grades one draft throughout.

The batch rules belong to the drafts that have batches (alpha.3 to alpha.8) and are not
applicable under the newest; shapes that changed between drafts pass or fail by the draft
graded; every report format names the draft.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from acp_conformance import cli
from acp_conformance.catalogue import REQUIREMENTS
from acp_conformance.checks.v2_cancel import known_stop_reasons
from acp_conformance.outcomes import Verdict
from acp_conformance.report import html_report, json_report, junit_report, terminal
from acp_conformance.v2_drafts import (
    BATCH_DRAFTS,
    DRAFTS,
    KIT_DRAFT,
    NEWEST,
    DraftRange,
    draft_exemption,
    parse_draft,
)
from acp_conformance.versions import VersionedBackend

from tests.checker.checks.conformance_checker_support import raw_v2_agent, run_checker

BATCH_RULES = ["version.v2-batch-basics", "version.v2-batch-requests"]


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("newest", NEWEST),
        ("latest", NEWEST),
        ("sdk-2.4.0", NEWEST),
        ("alpha.5", "alpha.5"),
        ("2.0.0-alpha.5", "alpha.5"),
        ("ALPHA.3", "alpha.3"),
    ],
)
def test_draft_names_and_their_aliases(name: str, canonical: str) -> None:
    assert parse_draft(name) == canonical


def test_an_unknown_draft_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match=r"unknown v2 draft 'alpha\.99'"):
        parse_draft("alpha.99")
    assert cli.main(["run", "--v2-draft", "alpha.99", "--", "true"]) == 2
    assert "unknown v2 draft 'alpha.99' (known: alpha.3, " in capsys.readouterr().err


def test_every_v2_requirement_carries_its_draft_range_and_no_v1_one_does() -> None:
    for req in REQUIREMENTS.values():
        if req.id.startswith("version.v2-"):
            assert isinstance(req.drafts, DraftRange), req.id
            assert req.to_json()["v2Drafts"] == req.drafts.label
        else:
            assert req.drafts is None, req.id
    for rule in BATCH_RULES:
        assert REQUIREMENTS[rule].drafts == BATCH_DRAFTS
    assert BATCH_DRAFTS.covers(KIT_DRAFT) and not BATCH_DRAFTS.covers(NEWEST)
    assert list(BATCH_DRAFTS.drafts()) == list(DRAFTS[:-1])


def test_a_rule_outside_the_graded_draft_says_why() -> None:
    assert draft_exemption(BATCH_DRAFTS, KIT_DRAFT) is None
    assert draft_exemption(None, NEWEST) is None
    reason = draft_exemption(BATCH_DRAFTS, NEWEST)
    assert reason == "belongs to the v2 drafts alpha.3..alpha.8, not to newest (--v2-draft)"


UNTAGGED_COMMANDS = {"sessionId": "s", "availableCommands": [{"name": "a", "description": "b"}]}


def test_untagged_commands_pass_only_under_the_drafts_before_the_newest() -> None:
    newest = VersionedBackend(2, NEWEST).validate_result("session/new", UNTAGGED_COMMANDS)
    assert newest == ["$.availableCommands[0]: 'type' is a required property"]
    for draft in ("alpha.3", KIT_DRAFT, "alpha.8"):
        assert VersionedBackend(2, draft).validate_result("session/new", UNTAGGED_COMMANDS) == []


def test_untagged_commands_in_an_update_follow_the_same_drafts() -> None:
    commands = UNTAGGED_COMMANDS["availableCommands"]
    update = {"sessionUpdate": "available_commands_update", "availableCommands": commands}
    params = {"sessionId": "s", "update": update}
    newest = VersionedBackend(2, NEWEST).validate_params("session/update", params)
    assert newest == ["$.update.availableCommands[0]: 'type' is a required property"]
    assert VersionedBackend(2, "alpha.3").validate_params("session/update", params) == []


def test_the_prompt_answer_needs_its_message_id_from_the_kit_draft_on() -> None:
    assert VersionedBackend(2, "alpha.3").validate_result("session/prompt", {}) == []
    for draft in (KIT_DRAFT, NEWEST):
        errors = VersionedBackend(2, draft).validate_result("session/prompt", {})
        assert errors == ["$: 'messageId' is a required property"], draft


def test_the_error_stop_reason_is_known_only_to_the_newest_draft() -> None:
    assert "error" in known_stop_reasons(NEWEST)
    assert "error" not in known_stop_reasons(KIT_DRAFT)


@pytest.mark.subprocess
def test_batch_rules_grade_only_drafts_with_batches_and_every_report_names_the_draft(
    tmp_path: Path,
) -> None:
    newest = run_checker(raw_v2_agent(), only=BATCH_RULES)
    for rule in BATCH_RULES:
        item = newest.results[rule]
        assert item.verdict is Verdict.NOT_APPLICABLE, (rule, item.reason)
        assert "not to newest (--v2-draft)" in item.reason
    kit = run_checker(raw_v2_agent(), only=BATCH_RULES, v2_draft=KIT_DRAFT)
    assert {kit.results[rule].verdict for rule in BATCH_RULES} == {Verdict.PASS}

    assert f"v2 draft {KIT_DRAFT}" in terminal.render(kit)
    assert json_report.to_data(kit)["options"]["v2Draft"] == KIT_DRAFT
    root = junit_report.to_xml(kit)
    graded = root.find("properties/property[@name='v2Draft']")
    assert graded is not None and graded.get("value") == KIT_DRAFT
    case = root.find(".//testcase[@name='version.v2-batch-basics']")
    assert case is not None
    drafts = case.find("properties/property[@name='v2Drafts']")
    assert drafts is not None and drafts.get("value") == "alpha.3..alpha.8"
    assert f"v2 draft: {KIT_DRAFT}" in html_report.render(kit)
    # The written files too (the JSON file is what CI archives).
    json_report.write(kit, tmp_path / "report.json")
    junit_report.write(kit, tmp_path / "junit.xml")
    written = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert written["options"]["v2Draft"] == KIT_DRAFT
    assert ET.parse(tmp_path / "junit.xml").getroot().find("properties") is not None
