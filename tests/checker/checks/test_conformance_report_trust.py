"""Reports a maintainer can trust at a glance (issue 36, item 5): only what blocks turns CI
red, a closing list of what blocks (one root cause once), ACP rules apart from house rules,
snippets as wide as the terminal, and an HTML row per blocking/non-blocking part."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from acp_conformance.catalogue import REQUIREMENTS
from acp_conformance.config import RunConfig
from acp_conformance.harness.client_side import ClientSide
from acp_conformance.harness.recorder import Recorder
from acp_conformance.judges.schemas import error_data_shapes
from acp_conformance.outcomes import Outcome, Verdict, failed, passed, soft_failed
from acp_conformance.report import findings, html_report, junit_report, terminal
from acp_conformance.requirements import Requirement, effective
from acp_conformance.run_result import RunResult, judged
from acp_conformance.scenarios.check_context import AgentRun, RunRecord
from acp_conformance.validation import load_backend

LONG = "x" * 300

#: A short exchange: initialize, its answer, a request with a wide answer, a notification.
FRAMES: list[tuple[str, Any]] = [
    ("c2a", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
    ("a2c", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1, "note": LONG}}),
    ("c2a", {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/"}}),
    ("a2c", {"jsonrpc": "2.0", "id": "2", "error": {"code": -32601, "message": "nope"}}),
    ("a2c", {"jsonrpc": "2.0", "method": "session/update", "params": {}}),
]


def _run(tmp_path: Path) -> AgentRun:
    recorder = Recorder()
    for direction, message in FRAMES:
        recorder.add(direction, json.dumps(message).encode())  # type: ignore[arg-type]
    return AgentRun("r#1", "baseline", recorder, ClientSide(tmp_path))


def _on(outcome: Outcome, frames: list[int]) -> Outcome:
    outcome.run_id, outcome.frames = "r#1", frames
    return outcome


def _req(rule: str, profile: str = "acp") -> Requirement:
    return effective(REQUIREMENTS[rule], profile)


def _result(tmp_path: Path, outcomes: dict[str, list[Outcome]], profile: str = "acp") -> RunResult:
    config = RunConfig(argv=["agent"], profile=profile)
    results = {rule: judged(_req(rule, profile), found) for rule, found in outcomes.items()}
    return RunResult(config, results, [_run(tmp_path)], started=0.0, duration=1.0)


#: Two MUST rules failing on the same frame (one root cause), a SHOULD failure, a pass.
def _failing(tmp_path: Path) -> RunResult:
    return _result(
        tmp_path,
        {
            "jsonrpc.id-echo": [_on(failed("id 2 answered as '2'"), [3])],
            "jsonrpc.error-shape": [_on(failed("the error answers an id never sent"), [3, 4])],
            "init.agent-info": [_on(failed("no agentInfo", frames=[1]), [1])],
            "session.new-returns-id": [passed("fine")],
        },
    )


def test_junit_makes_should_failures_skips_so_a_conformant_run_is_green(tmp_path: Path) -> None:
    soft_only = _result(
        tmp_path,
        {
            "init.agent-info": [_on(failed("no agentInfo"), [1])],
            "session.new-returns-id": [passed("fine")],
        },
    )
    assert REQUIREMENTS["init.agent-info"].tier.value in ("SHOULD", "INFO")
    assert soft_only.status == "conformant"
    root = junit_report.to_xml(soft_only)
    assert root.get("failures") == "0" and root.get("errors") == "0"
    case = root.find(".//testcase[@name='init.agent-info']")
    assert case is not None and case.find("failure") is None
    skipped = case.find("skipped")
    assert skipped is not None and "no agentInfo" in (skipped.get("message") or "")
    assert (skipped.get("message") or "").startswith("[SHOULD]") or "[INFO]" in (
        skipped.get("message") or ""
    )
    flags = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert flags.get("nonBlockingFailure") == "true"


def test_junit_keeps_must_failures_and_soft_must_failures_skip(tmp_path: Path) -> None:
    result = _result(
        tmp_path,
        {
            "jsonrpc.id-echo": [_on(failed("id 2 answered as '2'"), [3])],
            "jsonrpc.error-shape": [_on(soft_failed("late", "no deadline"), [3])],
        },
    )
    root = junit_report.to_xml(result)
    ET.fromstring(ET.tostring(root))  # well-formed
    failing = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    skipped = [c.get("name") for c in root.iter("testcase") if c.find("skipped") is not None]
    assert failing == ["jsonrpc.id-echo"] and skipped == ["jsonrpc.error-shape"]
    assert root.get("failures") == "1"


def test_terminal_ends_with_what_blocks_one_root_cause_once(tmp_path: Path) -> None:
    result = _failing(tmp_path)
    lines = terminal.render(result, width=100).splitlines()
    assert lines[-1] == result.verdict_line() and lines[-1].startswith("NOT CONFORMANT")
    start = next(i for i, line in enumerate(lines) if line.startswith("Blocks the verdict"))
    closing = lines[start:-2]  # the summary line and the verdict line follow
    assert lines[start] == "Blocks the verdict: 2 rules, 1 root cause"
    assert closing[1].startswith("  first frame r#1 #3 a2c: ")
    assert closing[2].startswith("    jsonrpc.id-echo  MUST  id 2 answered as '2'")
    assert closing[3].startswith("    jsonrpc.error-shape  MUST  ")
    # The SHOULD failure is in its table, not in what blocks.
    assert not any("init.agent-info" in line for line in closing)
    # In the tables the shared frame is quoted once; the second rule points at the first.
    body = "\n".join(lines[:start])
    assert body.count("r#1 #3 a2c: ") == 1
    assert "same root cause as jsonrpc.id-echo above (r#1 #3)" in body


def test_terminal_snippets_are_as_wide_as_the_terminal(tmp_path: Path) -> None:
    result = _failing(tmp_path)
    for width in (100, 160):
        lines = terminal.render(result, width=width).splitlines()
        snippet = next(line for line in lines if "r#1 #1 a2c: " in line)
        assert len(snippet) == width and snippet.endswith("…"), (width, snippet)


def test_terminal_and_html_put_house_rules_in_their_own_section(tmp_path: Path) -> None:
    house_rule = next(r for r in REQUIREMENTS.values() if r.house and r.tier.value == "MUST")
    adds = findings.house_addition(house_rule)
    assert adds and adds in house_rule.reference and "house rule" not in adds
    result = _result(
        tmp_path,
        {
            "jsonrpc.id-echo": [passed("echoed")],
            house_rule.id: [_on(failed("stricter than ACP"), [4])],
        },
    )
    text = terminal.render(result, width=120)
    acp_at, house_at = text.index(f"== {findings.ACP_SECTION}"), text.index("== iac-code house")
    assert acp_at < text.index("jsonrpc.id-echo") < house_at < text.index(house_rule.id)
    assert f"[beyond ACP: {adds}]" in " ".join(text.split())
    # Its hint names the public basis, not just "iac-code".
    assert "the rule: iac-code" not in text and "the rule: http" in text
    # Under --profile acp a house rule reports as SHOULD and does not block.
    assert result.status == "conformant" and "Blocks the verdict" not in text
    page = html_report.render(result)
    assert page.index("ACP and JSON-RPC 2.0 rules") < page.index("iac-code house rules")
    assert "beyond ACP" in page


def test_every_house_rule_says_what_it_adds() -> None:
    missing = [
        r.id
        for r in REQUIREMENTS.values()
        if r.house and not findings._HOUSE_CITATION.match(r.reference)
    ]
    assert missing == []


def test_html_splits_blocking_and_soft_parts_of_a_must_row(tmp_path: Path) -> None:
    result = _result(
        tmp_path,
        {
            "jsonrpc.id-echo": [
                _on(failed("id 2 answered as '2'"), [3]),
                _on(soft_failed("slow answer", "ACP sets no deadline"), [1]),
            ],
        },
    )
    page = html_report.render(result)
    rows = [row for row in page.split('<tr class="req"')[1:]]
    assert len(rows) == 2
    blocking = next(r for r in rows if 'data-blocking="yes"' in r)
    soft = next(r for r in rows if 'data-blocking="no"' in r)
    assert "answered as" in blocking and "slow answer" not in blocking
    assert "slow answer" in soft and "ACP sets no deadline" in soft and ">SHOULD<" in soft
    # Every frame of the failing exchange is there (from the request it answers), and the
    # cited one is highlighted.
    assert 'class="frame c2a" data-seq="2"' in blocking
    assert 'class="frame a2c decisive" data-seq="3"' in blocking


def test_error_data_shapes_never_fails_a_peer_under_the_acp_profile(tmp_path: Path) -> None:
    recorder = Recorder()
    answer = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "x", "data": 5}}
    for direction, message in [*FRAMES[:3], ("a2c", answer)]:
        recorder.add(direction, json.dumps(message).encode())  # type: ignore[arg-type]
    run = AgentRun("r#1", "baseline", recorder, ClientSide(tmp_path))
    for profile, verdict in (("acp", Verdict.NOT_APPLICABLE), ("iac-code", Verdict.FAIL)):
        record = RunRecord(RunConfig(argv=["a"], profile=profile), [run], backend=load_backend())
        [outcome] = error_data_shapes(record)
        assert outcome.verdict is verdict, (profile, outcome)
    assert outcome.frames == [3]
    [under_acp] = error_data_shapes(RunRecord(RunConfig(argv=["a"]), [run], backend=None))
    assert under_acp.scope and "iac-code" in under_acp.reason
