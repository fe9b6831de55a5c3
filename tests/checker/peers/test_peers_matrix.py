"""The matrix writer turns report JSON files into the expected markdown and JSON."""

from __future__ import annotations

import json
from pathlib import Path

from acp_conformance.peers.agents import OWN_AGENT, PEERS_BY_NAME
from acp_conformance.peers.matrix import AgentRun, build_matrix, render_markdown, write_matrix

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def runs() -> list[AgentRun]:
    return [
        AgentRun(OWN_AGENT, load("report_alpha.json"), report_path="alpha.json"),
        AgentRun(PEERS_BY_NAME["sdk-echo"], load("report_beta.json"), report_path="beta.json"),
        AgentRun(PEERS_BY_NAME["opencode"], None, error="not installed"),
    ]


def test_counts_per_area_and_totals() -> None:
    matrix = build_matrix(runs())
    assert matrix["areas"] == ["init", "jsonrpc", "session", "transport", "turn"]
    alpha, beta, missing = matrix["agents"]
    assert alpha["areas"]["session"] == {
        "pass": 1,
        "fail": 0,
        "not-applicable": 1,
        "harness-error": 1,
    }
    assert alpha["totals"] == {"pass": 3, "fail": 2, "not-applicable": 1, "harness-error": 1}
    assert beta["totals"] == {"pass": 2, "fail": 0, "not-applicable": 1, "harness-error": 0}
    assert missing["error"] == "not installed" and missing["areas"] == {}


def test_notable_failures_put_blocking_tiers_first_with_one_line_reasons() -> None:
    alpha = build_matrix(runs())["agents"][0]
    assert alpha["notableFailures"] == [
        # No requirement-level reason: the first failing check's reason is used.
        {
            "id": "jsonrpc.parse-error",
            "tier": "MUST",
            "reason": "no error response to a broken line",
            "reference": "https://www.jsonrpc.org/specification#error_object "
            "(JSON-RPC 2.0 §5.1 Error object)",
        },
        {
            "id": "init.info",
            "tier": "SHOULD",
            "reason": "agentInfo is missing second line",
            "reference": "",
        },
    ]
    limited = build_matrix(runs(), failure_limit=1)["agents"][0]
    assert [f["id"] for f in limited["notableFailures"]] == ["jsonrpc.parse-error"]
    assert "and 1 more" in render_markdown(build_matrix(runs(), failure_limit=1))


def test_markdown_matches_the_expected_file() -> None:
    expected = (FIXTURES / "expected_matrix.md").read_text(encoding="utf-8")
    assert render_markdown(build_matrix(runs())) == expected


def test_write_matrix_writes_both_files_with_the_same_content(tmp_path: Path) -> None:
    markdown_path, json_path = write_matrix(runs(), tmp_path / "out")
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["format"] == "acp-peers-matrix"
    assert [agent["name"] for agent in data["agents"]] == ["iac-code", "sdk-echo", "opencode"]
    assert markdown_path.read_text(encoding="utf-8") == render_markdown(data)
