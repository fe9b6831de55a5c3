"""``store_append``: appending events to the JSONL files and to PostgreSQL, side by side.

Measured in-process on the store itself (what ``persist`` costs the agent per event), with
the session locked as the agent holds it, so the PostgreSQL appends carry the fencing-token
check. The PostgreSQL row starts a throwaway server (:mod:`iac_code_dev.pg_server`), or uses
``IAC_CODE_BENCH_STORE_URL``; without either it is n/a, saying why.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

from iac_code.store import SessionStore, new_session_id
from iac_code.store.backend import SessionStoreBackend

from .context import BenchContext
from .results import Row, ms, ms_samples, summarize, timing_text
from .sessions import conversation_events

APPENDS = 2_000
URL_VARIABLE = "IAC_CODE_BENCH_STORE_URL"


def _measure(store: SessionStoreBackend, appends: int) -> dict[str, Any]:
    session_id = new_session_id()
    store.create(session_id, "/bench/project")
    events = list(conversation_events(appends))
    latencies: list[float] = []
    with store.lock(session_id):
        started = time.perf_counter()
        for event in events:
            before = time.perf_counter()
            store.append(session_id, event)
            latencies.append(time.perf_counter() - before)
        total = time.perf_counter() - started
    if len(store.load_events(session_id)) != appends:
        raise RuntimeError("the store lost appended events")
    return {"latencies": latencies, "per_second": appends / total}


def _row(name: str, measured: dict[str, Any], notes: str) -> Row:
    summary = summarize(measured["latencies"])
    return Row(
        metric=name,
        value=timing_text(summary),
        target="-",
        verdict="info",
        notes=f"{measured['per_second']:,.0f} appends/s one at a time; {notes}",
        data={
            "append_seconds": summary.as_dict(),
            "appends_per_second": round(measured["per_second"]),
            "samples_ms": ms_samples(measured["latencies"][:200]),
        },
    )


@contextlib.contextmanager
def database_url() -> Iterator[tuple[str, str]]:
    """The URL of a database for a store bench and how to describe its server (raises
    PostgresUnavailable when none can be started here)."""
    configured = os.environ.get(URL_VARIABLE)
    if configured:
        yield configured, f"the server of {URL_VARIABLE}"
        return
    from iac_code_dev.pg_server import running_server

    with running_server() as server:
        # Durability off, as in the tests: this compares the code paths, not the disks.
        yield server.url(), "a throwaway server on 127.0.0.1 (fsync and synchronous_commit off)"


def run(ctx: BenchContext, appends: int = APPENDS) -> list[Row]:
    workspace = ctx.workspace("store_append")
    jsonl = _measure(SessionStore(workspace.home), appends)
    rows = [_row("store_append_jsonl", jsonl, "JSONL files, one write per event (no fsync)")]
    from iac_code_dev.pg_server import PostgresUnavailable

    try:
        with database_url() as (url, server):
            from iac_code.store.pg_store import PostgresSessionStore

            store = PostgresSessionStore(url)
            try:
                database = _measure(store, appends)
            finally:
                store.close()
    except PostgresUnavailable as unavailable:
        rows.append(Row("store_append_postgres", "-", "-", "n/a", str(unavailable)))
        return rows
    ratio = summarize(database["latencies"]).median / summarize(jsonl["latencies"]).median
    rows.append(
        _row(
            "store_append_postgres",
            database,
            f"{server}, fenced by the session's lease; median {ratio:.1f}x JSONL's"
            f" {ms(summarize(jsonl['latencies']).median)}",
        )
    )
    return rows
