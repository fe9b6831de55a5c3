"""Smoke tests for ``iac-code-dev bench``: the harness produces well-formed rows.

They run the real ``iac-code acp`` subprocess with tiny sizes and never look at how fast it
was (SPEC §11: performance is measured by the benchmark, not asserted by tests).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from iac_code_dev.bench import METRICS, main, select
from iac_code_dev.bench.context import BenchContext, default_agent_argv
from iac_code_dev.bench.hardening import run_kill9_fast_new
from iac_code_dev.bench.results import Row, summarize
from iac_code_dev.bench.sessions import run_session_new
from iac_code_dev.bench.table import render

VERDICTS = {"ok", "MISSED", "n/a", "info"}


def _assert_well_formed(row: Row) -> None:
    assert row.metric and row.value and row.target
    assert row.verdict in VERDICTS
    json.dumps(row.as_dict())  # everything in a row must be JSON-serialisable


def test_bench_summary_uses_observed_values() -> None:
    summary = summarize([0.5, 0.1, 0.4, 0.2, 0.3])
    assert (summary.n, summary.median, summary.min, summary.max) == (5, 0.3, 0.1, 0.5)
    assert summary.p90 == 0.5  # nearest rank: an observed sample


def test_bench_only_selects_by_substring() -> None:
    assert [m.name for m in select(["session"])] == ["session_new"]
    assert [m.name for m in select([])] == [m.name for m in METRICS if m.by_default]
    assert select(["no-such-metric"]) == []
    # The minutes-long robustness metrics run only when named.
    assert {"kill9", "kill9_fast_new", "burst"}.isdisjoint(m.name for m in select([]))
    assert [m.name for m in select(["kill9"])] == ["kill9", "kill9_fast_new"]


def test_bench_session_new_produces_a_row(tmp_path: Path) -> None:
    ctx = BenchContext(agent_argv=default_agent_argv(), root=tmp_path, timeout=30.0)
    rows = run_session_new(ctx, calls=3)
    assert [row.metric for row in rows] == ["session_new"]
    _assert_well_formed(rows[0])
    assert len(rows[0].data["samples_ms"]) == 3
    assert "session_new" in render({"nproc": 2, "loadavg": [0.0, 0.0, 0.0]}, rows)


def test_bench_kill9_fast_new_counts_the_sessions_a_new_process_finds(tmp_path: Path) -> None:
    ctx = BenchContext(agent_argv=default_agent_argv(), root=tmp_path, timeout=30.0, kill_trials=2)
    [row] = run_kill9_fast_new(ctx)
    _assert_well_formed(row)
    assert row.metric == "kill9_fast_new" and row.data["trials"] == 2
    assert row.data["lost"] == [] and row.value == "0 of 2 lost"


def test_bench_main_writes_table_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.json"
    args = argparse.Namespace(only=["startup"], repeat=1, compare=None, json_path=out)
    assert main(args) == 0
    table = capsys.readouterr().out
    assert table.startswith("machine: ")
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["machine"]["nproc"] >= 1
    names = [row["metric"] for row in document["rows"]]
    assert names == ["startup", "startup RSS"]
    for raw in document["rows"]:
        assert raw["verdict"] in VERDICTS
        assert raw["metric"] in table
    assert len(document["rows"][0]["data"]["samples_ms"]) == 1


def test_bench_harness_error_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An agent that cannot start is a harness error: an ERROR row and exit code 1."""
    out = tmp_path / "bench.json"
    args = argparse.Namespace(
        only=["startup"], repeat=1, compare="/nonexistent/agent-binary", json_path=out
    )
    assert main(args) == 1
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert rows[0]["verdict"] == "ERROR"
    assert "ERROR" in capsys.readouterr().out


def test_bench_remote_initialize_produces_a_row(tmp_path: Path) -> None:
    from iac_code_dev.bench.remote import run_initialize

    ctx = BenchContext(agent_argv=default_agent_argv(), root=tmp_path, timeout=30.0)
    rows = run_initialize(ctx, calls=2)
    assert [row.metric for row in rows] == ["remote_initialize"]
    _assert_well_formed(rows[0])
    assert len(rows[0].data["samples_ms"]) == 2


def test_bench_infra_classifier_produces_a_row(tmp_path: Path) -> None:
    from iac_code_dev.bench.classifier import COMMANDS, run

    ctx = BenchContext(agent_argv=default_agent_argv(), root=tmp_path, timeout=30.0)
    rows = run(ctx, rounds=2)
    assert [row.metric for row in rows] == ["infra_classifier"]
    _assert_well_formed(rows[0])
    assert rows[0].data["seconds"]["n"] == 2 * len(COMMANDS)
