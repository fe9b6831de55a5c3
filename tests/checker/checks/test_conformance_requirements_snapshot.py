"""The set of requirements, as ``acp-conformance list --json`` prints it, against a snapshot.

Moving a requirement's definition (say, next to its check) must not change what is judged:
its id, tier, statement, citation, kit ids, gate, model need and house flag. Adding,
removing or rewording a requirement is a deliberate change of the snapshot too: rewrite it
with ``ACP_CONFORMANCE_UPDATE_SNAPSHOT=1`` set while running this file and let the diff
show what changed. The snapshot is the ``iac-code`` profile's listing, where every
requirement keeps its declared tier. Order is not part of it: the listing follows the order
the check modules register in.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from acp_conformance.cli import main

SNAPSHOT = Path(__file__).parent / "fixtures" / "requirements_snapshot.json"


def _listed(capsys: pytest.CaptureFixture[str], profile: str) -> dict[str, dict[str, object]]:
    assert main(["list", "--json", "--profile", profile]) == 0
    listed = json.loads(capsys.readouterr().out)
    by_id = {item.pop("id"): item for item in listed}
    assert len(by_id) == len(listed), "a requirement id is listed twice"
    return dict(sorted(by_id.items()))


def test_the_requirements_match_the_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    current = _listed(capsys, "iac-code")  # every tier as declared (acp softens house rules)
    if os.environ.get("ACP_CONFORMANCE_UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.write_text(json.dumps(current, indent=2, ensure_ascii=False) + "\n")
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert sorted(set(current) - set(expected)) == [], "requirements not in the snapshot"
    assert sorted(set(expected) - set(current)) == [], "requirements gone from the snapshot"
    changed = sorted(rid for rid in current if current[rid] != expected[rid])
    assert changed == [], f"requirements that differ from the snapshot: {changed}"


def test_the_house_profile_changes_only_the_tiers_of_house_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    under_acp = _listed(capsys, "acp")
    under_house = _listed(capsys, "iac-code")
    assert set(under_acp) == set(under_house)
    for rid, item in under_house.items():
        plain = under_acp[rid]
        assert {**item, "tier": None} == {**plain, "tier": None}, rid
        if item["tier"] != plain["tier"]:
            assert item["house"] and plain["tier"] == "SHOULD", rid
