"""Smoke tests of the first-turn bench rows: they produce well-formed rows (never timed)."""

from __future__ import annotations

import json
from pathlib import Path

from iac_code_dev.bench import select
from iac_code_dev.bench.context import BenchContext, default_agent_argv
from iac_code_dev.bench.first_turn import run_cold_new, run_cold_prompt

VERDICTS = {"ok", "MISSED", "n/a", "info"}


def test_first_turn_rows_are_selectable_by_name() -> None:
    names = [m.name for m in select(["cold_", "prompt_idle", "preload_load"])]
    assert names == ["cold_new", "prompt_idle", "cold_prompt", "preload_load"]


def test_cold_new_and_cold_prompt_produce_rows(tmp_path: Path) -> None:
    ctx = BenchContext(agent_argv=default_agent_argv(), root=tmp_path, repeat=1, timeout=30.0)
    rows = run_cold_new(ctx) + run_cold_prompt(ctx)
    assert [row.metric for row in rows] == ["cold_new", "cold_prompt"]
    for row in rows:
        assert row.value and row.target and row.verdict in VERDICTS
        json.dumps(row.as_dict())
