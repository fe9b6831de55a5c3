"""``iac-code-dev bench`` rows of the PostgreSQL store (issue 37): ``first_chunk_store``,
``list_postgres`` and ``takeover`` run end to end on small numbers and give well-formed rows;
without PostgreSQL each is n/a saying why (never a failure of the bench). The numbers
themselves are the bench's business, not these tests'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iac_code_dev import pg_server
from iac_code_dev.bench import store_postgres
from iac_code_dev.bench.context import BenchContext, default_agent_argv
from iac_code_dev.bench.store_append import URL_VARIABLE

pytestmark = [pytest.mark.xdist_group("postgres"), pytest.mark.subprocess]


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BenchContext:
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    if pg_server.server_binaries() is None:
        pytest.skip(f"no PostgreSQL server here ({pg_server.INSTALL_HINT})")
    return BenchContext(agent_argv=default_agent_argv(), root=tmp_path, timeout=60.0)


def test_the_store_rows_are_measured_on_both_backends(ctx: BenchContext) -> None:
    rows = [
        *store_postgres.run_first_chunk_store(ctx, prompts=2),
        *store_postgres.run_list_postgres(ctx, sessions=60, runs=1),
        *store_postgres.run_takeover(ctx, trials=1),
    ]
    for row in rows:
        json.dumps(row.as_dict())
        assert row.verdict in ("ok", "MISSED", "info"), row
    jsonl, database, listing, takeover = rows
    assert jsonl.metric == "first_chunk_store jsonl" and len(jsonl.data["samples_ms"]) == 2
    assert database.metric == "first_chunk_store postgres" and "added_median_ms" in database.data
    assert listing.metric == "list_postgres" and "page of 50" in listing.notes
    assert set(listing.data["owner_page_ms"]) == {"postgres", "jsonl"}
    assert takeover.metric == "takeover" and takeover.data["lease_seconds"] == 2.0
    assert "before each kill the live owner's session was refused each time" in takeover.notes


def test_without_postgres_the_rows_are_n_a_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    monkeypatch.setattr(pg_server, "server_binaries", lambda: None)
    ctx = BenchContext(agent_argv=default_agent_argv(), root=tmp_path, timeout=60.0)
    rows = [
        *store_postgres.run_first_chunk_store(ctx, prompts=1),
        *store_postgres.run_list_postgres(ctx, sessions=1, runs=1),
        *store_postgres.run_takeover(ctx, trials=1),
    ]
    assert [row.metric for row in rows] == [
        "first_chunk_store jsonl",
        "first_chunk_store postgres",
        "list_postgres",
        "takeover",
    ]
    for row in rows:
        assert row.verdict == "n/a" and pg_server.INSTALL_HINT in row.notes
