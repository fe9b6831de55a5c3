"""The checker's ``--url`` mode against a server it did not write: an agent served by the
official TypeScript SDK's AcpServer (HTTP+SSE and WebSocket), and seeded transport defects."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.run_result import RunResult

from tests.checker.remote.remote_support import require_node_fixture, run_remote, ts_agent_argv
from tests.checker.remote.server_process import serving

#: What the SDK's server (2.4.0) does not do; SHOULD-tier findings recorded in the peers matrix.
TS_SDK_SHOULD_GAPS = {
    "http.sse-event-ids",
    "http.sse-resume",
    "http.origin-checked",
    "http.protocol-version-checked",
}


def _problems(result: RunResult) -> dict[str, tuple[str, str]]:
    return {
        rid: (r.verdict.value, r.reason)
        for rid, r in result.results.items()
        if r.verdict in (Verdict.FAIL, Verdict.HARNESS_ERROR)
    }


@pytest.mark.interop
@pytest.mark.subprocess
def test_ts_sdk_http_server_is_conformant_with_its_known_gaps(tmp_path: Path) -> None:
    node = require_node_fixture()
    with serving(ts_agent_argv(node, tmp_path)) as url:
        result = run_remote(url)
    problems = _problems(result)
    assert result.status == "conformant", problems
    http = {rid: r.verdict for rid, r in result.results.items() if rid.startswith("http.")}
    failing = {rid for rid, verdict in http.items() if verdict is Verdict.FAIL}
    # The SDK's tiny echo agent returns zod trees as -32602 data (a finding about the SDK).
    assert set(problems) - {"schema.error-data-shapes"} == TS_SDK_SHOULD_GAPS == failing
    musts = [
        rid
        for rid, r in result.results.items()
        if rid.startswith("http.") and r.requirement.blocking
    ]
    assert all(http[rid] is Verdict.PASS for rid in musts if rid != "http.token-required")
    # The transport-independent protocol checks really ran over HTTP.
    assert result.results["session.new-returns-id"].verdict is Verdict.PASS
    assert result.results["prompt.updates-before-response"].verdict is Verdict.PASS
    assert result.results["shutdown.no-orphans"].verdict is Verdict.NOT_APPLICABLE


@pytest.mark.interop
@pytest.mark.subprocess
def test_ts_sdk_websocket_server_is_conformant(tmp_path: Path) -> None:
    node = require_node_fixture()
    with serving(ts_agent_argv(node, tmp_path)) as url:
        result = run_remote(url, websocket=True)
    assert result.status == "conformant", _problems(result)
    assert result.results["ws.upgrade"].verdict is Verdict.PASS
    assert result.results["jsonrpc.parse-error"].verdict is Verdict.PASS
    assert result.results["http.stream-routing"].verdict is Verdict.NOT_APPLICABLE
    assert result.results["session.new-unique-ids"].verdict is Verdict.PASS


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("defect", "requirement"),
    [
        ("unknown-connection-400", "http.unknown-connection-id"),
        ("post-200", "http.post-accepted"),
        ("wrong-content-type-400", "http.content-type"),
    ],
)
def test_seeded_wrong_status_code_is_caught(defect: str, requirement: str, tmp_path: Path) -> None:
    node = require_node_fixture()
    with serving(ts_agent_argv(node, tmp_path, "--defect", defect)) as url:
        under_acp = run_remote(url, only=[requirement])
        under_house_rules = run_remote(url, only=[requirement], profile="iac-code")
    for result in (under_acp, under_house_rules):
        item = result.results[requirement]
        assert item.verdict is Verdict.FAIL, (item.verdict, item.reason)
    # A status code the RFD states with MUST blocks under either profile; one that only the
    # official SDK's behaviour fixes is a house rule and blocks only under --profile iac-code.
    house = under_acp.results[requirement].requirement.house
    assert under_acp.exit_code == (0 if house else 1)
    assert under_house_rules.exit_code == 1


@pytest.mark.subprocess
def test_a_server_that_ignores_the_token_fails_token_required(tmp_path: Path) -> None:
    node = require_node_fixture()
    with serving(ts_agent_argv(node, tmp_path)) as url:
        result = run_remote(url, only=["http.token-required", "init.responds"], token="s3cret")
    assert result.results["http.token-required"].verdict is Verdict.FAIL
    # The token is sent on every request of the protocol checks, which still pass.
    assert result.results["init.responds"].verdict is Verdict.PASS
