"""``--v2-draft`` for ``validate`` and ``proxy``: a v2 session is graded as the named draft.

The same v2 traffic (a prompt answered without ``messageId``, which alpha.3 allows and the
newest draft refuses) is judged under both drafts, offline (a transcript file) and live
(the proxy's monitor); v1 traffic is graded as v1 whatever the option says.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from acp_conformance.cli import build_parser, main
from acp_conformance.proxy.monitor import LiveMonitor
from acp_conformance.proxy.reports import render_html, to_data

V2_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "c", "version": "1"}},
}
V2_INIT_OK = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {}},
}
PROMPT = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "session/prompt",
    "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
}
#: alpha.3's answer: no ``messageId`` (the newest draft requires it).
OLD_PROMPT_OK = {"jsonrpc": "2.0", "id": 2, "result": {}}
V2_SESSION = [V2_INIT, V2_INIT_OK, PROMPT, OLD_PROMPT_OK]


def _write(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return path


def test_validate_grades_a_v2_transcript_as_the_newest_draft_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "v2.jsonl", V2_SESSION)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "4 messages, 1 problems (graded as v2 draft newest)" in out
    assert "session/prompt result" in out and "messageId" in out


def test_validate_grades_a_v2_transcript_as_the_draft_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "v2.jsonl", V2_SESSION)
    assert main(["validate", "--v2-draft", "2.0.0-alpha.3", str(path)]) == 0
    assert "0 problems (graded as v2 draft alpha.3)" in capsys.readouterr().out


def test_validate_grades_v1_as_v1_whatever_the_draft(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v1 = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}},
    ]
    path = _write(tmp_path / "v1.jsonl", v1)
    assert main(["validate", "--v2-draft", "alpha.3", str(path)]) == 0
    assert "0 problems (graded as v1)" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["validate", "proxy"])
def test_an_unknown_draft_is_a_usage_error(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = [str(_write(tmp_path / "t.jsonl", V2_SESSION))] if command == "validate" else []
    args = [command, "--v2-draft", "alpha.99", *target]
    assert main([*args, "--", "true"] if command == "proxy" else args) == 2
    assert "unknown v2 draft 'alpha.99'" in capsys.readouterr().err


def test_proxy_takes_the_draft_by_any_of_its_names() -> None:
    args = build_parser().parse_args(["proxy", "--v2-draft", "2.0.0-alpha.5", "--", "agent"])
    assert args.v2_draft == "alpha.5"
    assert build_parser().parse_args(["proxy", "--", "agent"]).v2_draft == "newest"


def _live(draft: str) -> tuple[LiveMonitor, list[str]]:
    monitor = LiveMonitor(v2_draft=draft)
    rules: list[str] = []
    for message in V2_SESSION:
        direction = "c2a" if "method" in message else "a2c"
        rules += [f.rule.id for f in monitor.feed(direction, json.dumps(message).encode())]
    rules += [f.rule.id for f in monitor.finish()]
    return monitor, rules


def test_the_proxy_judges_a_v2_session_as_the_draft_asked_for() -> None:
    newest, newest_rules = _live("newest")
    older, older_rules = _live("alpha.3")
    assert newest_rules == ["schema.agent-messages-valid"]
    assert "messageId" in newest.findings[-1].reason
    assert older_rules == []
    # The reports name the draft graded.
    data = to_data(["agent"], older, exit_code=0, closed=[], skipped=0, started=time.time())
    assert data["v2Draft"] == "alpha.3" and data["protocolVersion"] == 2
    assert "v2 draft alpha.3" in render_html(data)
