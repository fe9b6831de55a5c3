"""One rule catalogue for ``run``, ``client`` and ``proxy``: a rule judged by two commands has
one id, one statement, one citation and one tier in both (the client and the proxy once gave
the same five client rules different ids); the checks run in the catalogue's declared order."""

from __future__ import annotations

import re

import pytest
from acp_conformance import catalogue
from acp_conformance.catalogue import CHECKS, CLIENT_REQUIREMENTS, REQUIREMENTS, RULES, judged_by
from acp_conformance.client.command import build_result
from acp_conformance.config import RunConfig
from acp_conformance.harness.remote_http import RemoteTarget
from acp_conformance.proxy.rules import live_rules
from acp_conformance.remote_scope import exemption
from acp_conformance.requirements import TRANSPORTS


def test_every_rule_the_proxy_reports_is_the_catalogues_rule_unchanged() -> None:
    live = live_rules("iac-code")
    assert set(live) == {rule.id for rule in judged_by("proxy")}
    for rule_id, rule in live.items():
        catalogued = RULES[rule_id]
        assert (rule.tier, rule.statement, rule.reference) == (
            catalogued.tier.value,
            catalogued.statement,
            catalogued.reference,
        ), rule_id
        assert rule.side == ("client" if rule_id.startswith("client.") else "agent")


def test_client_rules_the_proxy_shares_with_the_client_command_keep_one_id() -> None:
    shared = {r.id for r in judged_by("client")} & {r.id for r in judged_by("proxy")}
    assert shared == {
        "client.init.first",
        "client.wire.json",
        "client.schema.messages",
        "client.jsonrpc.id-echo",
        "client.jsonrpc.answers",
    }


def test_ids_are_unique_across_commands_and_no_statement_is_said_twice() -> None:
    everything = [*REQUIREMENTS.values(), *CLIENT_REQUIREMENTS]
    assert len(RULES) == len(everything)
    statements = [rule.statement for rule in everything]
    assert sorted(s for s in set(statements) if statements.count(s) > 1) == []
    pattern = re.compile(r"^client\.[a-z]+\.[a-z0-9]+(-[a-z0-9]+)*$")
    assert [r.id for r in CLIENT_REQUIREMENTS if not pattern.match(r.id)] == []


def test_every_rule_names_the_commands_that_judge_it() -> None:
    commands = {"run", "client", "proxy"}
    assert all(rule.judged_by and set(rule.judged_by) <= commands for rule in RULES.values())
    assert all("run" in rule.judged_by for rule in REQUIREMENTS.values())
    assert not any("run" in rule.judged_by for rule in CLIENT_REQUIREMENTS)
    assert REQUIREMENTS["jsonrpc.id-echo"].to_json()["judgedBy"] == ["run", "proxy"]


def test_the_client_commands_report_lists_exactly_its_rules() -> None:
    result = build_result(["client"], [], started=0.0, timeout=1.0)
    assert list(result.results) == [rule.id for rule in judged_by("client")]
    assert "client.jsonrpc.envelope" not in result.results  # the proxy's alone


def test_checks_run_in_the_declared_module_order_whatever_was_imported_first() -> None:
    position = {module.__name__: index for index, module in enumerate(catalogue.RUN_ORDER)}
    order = [position[check.module] for check in CHECKS]
    assert order == sorted(order)
    assert {check.module for check in CHECKS} == set(position)  # each listed module has a rule


def test_a_rule_module_missing_from_the_run_order_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    some = next(iter(REQUIREMENTS.values()))
    stray = ({some.id: some}, {some.id: "acp_conformance.checks.stray"}, [])
    monkeypatch.setattr(catalogue, "registered_so_far", lambda: stray)
    with pytest.raises(RuntimeError, match=r"acp_conformance\.checks\.stray"):
        catalogue._in_run_order()


def _config(transport: str) -> RunConfig:
    if transport == "stdio":
        return RunConfig(argv=["agent"])
    target = RemoteTarget("http://127.0.0.1:9/acp", websocket=transport == "ws")
    return RunConfig(argv=["server", "--port", "{port}"], remote=target)


def test_each_rules_transports_are_exactly_those_the_run_judges_it_over() -> None:
    for rule in REQUIREMENTS.values():
        applies = tuple(t for t in TRANSPORTS if exemption(rule, _config(t)) is None)
        assert rule.transports == applies, rule.id
    assert REQUIREMENTS["transport.newline-terminated"].to_json()["transports"] == ["stdio"]
    assert REQUIREMENTS["jsonrpc.id-echo"].transports == ("stdio", "http", "ws")
    assert all(rule.transports == ("stdio",) for rule in CLIENT_REQUIREMENTS)
