"""``iac-code-dev bench --only store_append``: JSONL and PostgreSQL append rows, well formed;
without PostgreSQL the database row is n/a and says why (never a failure of the bench)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iac_code_dev import pg_server
from iac_code_dev.bench.context import BenchContext, default_agent_argv
from iac_code_dev.bench.store_append import URL_VARIABLE, run

pytestmark = pytest.mark.xdist_group("postgres")


def _context(tmp_path: Path) -> BenchContext:
    return BenchContext(agent_argv=default_agent_argv(), root=tmp_path, timeout=30.0)


def test_store_append_rows_for_both_backends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    rows = run(_context(tmp_path), appends=20)
    assert [row.metric for row in rows] == ["store_append_jsonl", "store_append_postgres"]
    for row in rows:
        json.dumps(row.as_dict())
    assert rows[0].verdict == "info" and rows[0].data["append_seconds"]["n"] == 20
    if pg_server.server_binaries() is not None:
        assert rows[1].verdict == "info" and rows[1].data["append_seconds"]["n"] == 20
        assert "fenced by the session's lease" in rows[1].notes


def test_without_postgres_the_database_row_is_n_a_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    monkeypatch.setattr(pg_server, "server_binaries", lambda: None)
    rows = run(_context(tmp_path), appends=5)
    assert rows[1].metric == "store_append_postgres" and rows[1].verdict == "n/a"
    assert "apt-get install -y postgresql" in rows[1].notes
