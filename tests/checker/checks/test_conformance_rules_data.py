"""The rules are data (``acp_conformance/rules/*.toml``) and checks only bind to their ids:
a check naming an unknown rule, a rule ``run`` judges with no check and a malformed entry
each fail at import, by name."""

from __future__ import annotations

import tomllib
from importlib.resources import files

import pytest
from acp_conformance import catalogue
from acp_conformance.catalogue import CHECKS, RULES
from acp_conformance.requirements import RUN_WIDE, Tier, check, load_rules, rule_from_data


def test_every_rule_of_the_catalogue_comes_from_the_data_files() -> None:
    folder = files("acp_conformance") / "rules"
    ids = [
        entry["id"]
        for path in folder.iterdir()
        if path.name.endswith(".toml")
        for entry in tomllib.loads(path.read_text(encoding="utf-8"))["rule"]
    ]
    assert len(ids) == len(set(ids)) == len(RULES)
    assert set(ids) == set(RULES) == set(load_rules())


def test_each_area_has_its_own_file() -> None:
    folder = files("acp_conformance") / "rules"
    for path in folder.iterdir():
        if path.name.endswith(".toml"):
            areas = {r["id"].split(".")[0] for r in tomllib.loads(path.read_text())["rule"]}
            assert areas == {path.name.removesuffix(".toml")}, path.name


def test_a_check_naming_an_unknown_rule_fails_when_it_is_bound() -> None:
    with pytest.raises(KeyError, match=r"jsonrpc\.no-such-rule"):
        check("jsonrpc.no-such-rule", scenario=RUN_WIDE)
    # a client rule is not one `run` judges: no check of `run` may bind to it
    with pytest.raises(KeyError, match=r"client\.init\.first"):
        check("client.init.first", scenario=RUN_WIDE)


def test_a_rule_with_no_check_fails_the_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    requirements, defined_in, checks = catalogue.registered_so_far()
    orphan = next(iter(requirements))
    without = [c for c in checks if c.requirement != orphan]
    kept = {rid: module for rid, module in defined_in.items() if rid != orphan}
    monkeypatch.setattr(catalogue, "registered_so_far", lambda: (requirements, kept, without))
    with pytest.raises(RuntimeError, match=f"no check bound.*{orphan}"):
        catalogue._in_run_order()


def test_a_rule_is_listed_where_its_first_scenario_check_is() -> None:
    # judged in the gating scenario and by a run-wide judge: listed with the scenario check
    home = {c.requirement: c for c in reversed(CHECKS) if c.scenario is not None}
    assert home["gating.no-unadvertised-client-methods"].module.endswith("checks.gating")
    listed = list(catalogue.REQUIREMENTS)
    assert listed.index("gating.no-unadvertised-client-methods") > listed.index("jsonrpc.id-echo")


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"id": "x.y", "tier": "MUST", "statement": "s", "citation": "c", "gates": "a"}, "gates"),
        ({"id": "x.y", "tier": "CAPABILITY", "statement": "s", "citation": "c"}, "need a gate"),
        (
            {
                "id": "x.y",
                "tier": "MUST",
                "statement": "s",
                "citation": "c",
                "drafts": "alpha.8",
                "versions": ["v1"],
            },
            "needs v2 in its versions",
        ),
        ({"id": "x.y", "tier": "OFTEN", "statement": "s", "citation": "c"}, "OFTEN"),
    ],
)
def test_a_malformed_rule_entry_is_named(entry: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        rule_from_data(entry, "rules/x.toml")


def test_a_v2_rule_gets_its_draft_range_from_the_data() -> None:
    entry = {
        "id": "version.v2-x",
        "tier": "SHOULD",
        "statement": "s",
        "citation": "c",
        "versions": ["v2"],
    }
    assert rule_from_data(entry, "t").drafts is not None
    ranged = rule_from_data({**entry, "drafts": "alpha.3..alpha.8"}, "t")
    assert ranged.drafts is not None and ranged.drafts.label == "alpha.3..alpha.8"
    assert rule_from_data({**entry, "tier": "MUST"}, "t").tier is Tier.MUST
