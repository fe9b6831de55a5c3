"""The protocol coverage table in docs/protocol-coverage.md is current and complete."""

from __future__ import annotations

from pathlib import Path

import pytest
from iac_code.agent import info
from iac_code_dev import coverage

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocol-coverage.md"


def test_the_checked_in_coverage_table_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == coverage.render_markdown(), (
        "docs/protocol-coverage.md is stale: run"
        " `.venv/bin/iac-code-dev coverage --write docs/protocol-coverage.md`"
    )


def test_every_schema_entry_has_an_explanation() -> None:
    assert coverage.missing_notes() == []


def test_the_table_follows_what_initialize_advertises() -> None:
    advertised = info.agent_capabilities(images=True)
    rows = {line.cells[0].strip("`"): line.cells[1] for line in coverage.agent_capability_lines()}
    assert rows["agentCapabilities.auth.logout"] == coverage.YES
    assert rows["agentCapabilities.promptCapabilities.audio"] == coverage.NO
    assert advertised["promptCapabilities"]["audio"] is False
    methods = {line.cells[0].strip("`"): line.cells[4] for line in coverage.method_lines()}
    assert methods["session/prompt"] == coverage.YES
    assert methods["elicitation/complete"] == coverage.NO  # never sent by the runtime
    assert methods["elicitation/create"] == coverage.YES


def test_the_command_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert coverage.main([]) == 0
    assert capsys.readouterr().out == coverage.render_markdown()
