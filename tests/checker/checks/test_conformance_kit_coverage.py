"""The mapping to the official ACP test kit (``acp_conformance.kit``): every MANDATORY and
CAPABILITY kit id, v1 and v2, is covered by one of our requirements, or listed as pending
with its reason; the pending ones show as expected failures (strict: covering one without
taking it off the list fails), so the gap stays visible."""

from __future__ import annotations

import json
import re

import pytest
from acp_conformance.catalogue import REQUIREMENTS
from acp_conformance.cli import main
from acp_conformance.kit import COVERAGE, KIT, PENDING, KitTier, covered_by

BLOCKING = sorted(kit_id for kit_id, req in KIT.items() if req.blocking)


def _param(kit_id: str) -> object:
    if kit_id in PENDING:
        return pytest.param(
            kit_id, marks=pytest.mark.xfail(strict=True, reason=f"pending: {PENDING[kit_id]}")
        )
    return kit_id


@pytest.mark.parametrize("kit_id", [_param(k) for k in BLOCKING])
def test_every_mandatory_and_capability_kit_id_is_covered(kit_id: str) -> None:
    assert covered_by().get(kit_id), f"{kit_id} ({KIT[kit_id].summary}) is covered by none of ours"


def test_pending_ids_are_blocking_kit_ids_with_a_reason() -> None:
    for kit_id, reason in PENDING.items():
        assert kit_id in KIT and KIT[kit_id].blocking, kit_id
        assert len(reason) > 20, kit_id


def test_the_mapping_names_only_registered_requirements_and_known_kit_ids() -> None:
    assert set(COVERAGE) <= set(REQUIREMENTS)
    unknown = {k for ids in COVERAGE.values() for k in ids if k not in KIT}
    assert unknown == set()
    assert all(REQUIREMENTS[ours].tck == ids for ours, ids in COVERAGE.items())


def test_the_kit_list_has_its_published_size_per_version_and_tier() -> None:
    def count(version: int, tier: KitTier) -> int:
        return sum(1 for r in KIT.values() if r.version == version and r.tier is tier)

    v1 = [count(1, t) for t in KitTier]
    v2 = [count(2, t) for t in KitTier]
    assert v1 == [21, 19, 12, 4]
    assert v2 == [19, 51, 20, 16]
    assert all(re.fullmatch(r"v[12]:ACP-[A-Z]+(-[A-Z]+)?-\d{3}", k) for k in KIT)


def test_list_json_prints_one_object_per_requirement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert [item["id"] for item in items] == list(REQUIREMENTS)
    for item in items:
        assert {"id", "tier", "statement", "citation", "tck"} <= set(item)
        assert all(kit_id in KIT for kit_id in item["tck"])
    by_id = {item["id"]: item for item in items}
    assert "v1:ACP-INIT-003" in by_id["init.unsupported-version-not-echoed"]["tck"]
    assert by_id["jsonrpc.parse-error"]["tier"] == "SHOULD"  # as --profile acp judges it


def test_list_json_follows_the_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json", "--profile", "iac-code", "-k", "jsonrpc.parse-error"]) == 0
    (item,) = json.loads(capsys.readouterr().out)
    assert item["tier"] == "MUST" and item["house"] is True
