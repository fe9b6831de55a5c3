"""The PostgreSQL store seen from a client (issue 37): ``first_chunk_store``, ``list_postgres``
and ``takeover``.

- ``first_chunk_store``: two agents on one scripted model, one on the JSONL files and one on
  PostgreSQL, prompted in turn; the first ``agent_message_chunk`` beyond the model's own
  latency, side by side (the database may add at most 5 ms to the median).
- ``list_postgres``: 10,000 sessions in the database (written with one ``COPY``), then the
  first ``session/list`` page of a fresh agent, as the ``list`` row does for JSONL; also one
  principal's page (the owner filter) timed on each store in this process.
- ``takeover``: an agent holds a session's lease and is killed with SIGKILL; another agent
  asks ``session/load`` until it gets the session. The lease expiry is set short here (the
  product default is 15 s) and reported beside the number.

Each metric starts a throwaway server (:mod:`iac_code_dev.pg_server`) or uses
``IAC_CODE_BENCH_STORE_URL``, in a scratch schema dropped afterwards; without either the
rows are n/a, saying why.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

from acp_scripted_llm import Turn
from iac_code.store import SessionStore, new_session_id
from iac_code.store.meta import utc_now

from ._client import AgentProcess, HarnessError
from .context import BenchContext, initialize, new_session, wait_until_ready
from .llm import prompt, scripted_llm, timed_first_chunk
from .results import Row, at_most, ms, ms_samples, summarize, timing_text
from .sessions import LIST_RUNS, LIST_SESSIONS, list_row, time_first_list
from .store_append import database_url

FIRST_CHUNK_PROMPTS = 20
FIRST_CHUNK_ADDED_TARGET = 0.005
LIST_OWNERS = 10
#: Seconds between start-up and the measured session/list: the background connection is made.
CONNECTED_AFTER = 1.0
OWNER_PAGE_CALLS = 5
TAKEOVER_LEASE_SECONDS = 2.0
TAKEOVER_TRIALS = 3
#: Allowed beyond the lease expiry: the heir's retry pause and a loaded machine's scheduling.
TAKEOVER_SLACK_SECONDS = 1.0
_RETRY_PAUSE = 0.02  # between two session/load attempts of the taking-over agent


@contextlib.contextmanager
def _scratch_database() -> Iterator[tuple[str, str]]:
    """(URL of an empty schema, description of the server); the schema is dropped after."""
    import psycopg

    with database_url() as (url, server):
        schema = f"bench_{secrets.token_hex(6)}"
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {schema}".encode())
        separator = "&" if "?" in url else "?"
        try:
            yield f"{url}{separator}options={quote(f'-c search_path={schema}', safe='')}", server
        finally:
            with psycopg.connect(url, autocommit=True) as connection:
                connection.execute(f"DROP SCHEMA {schema} CASCADE".encode())


def _unavailable(names: list[str], run: Callable[[], list[Row]]) -> list[Row]:
    from iac_code_dev.pg_server import PostgresUnavailable

    try:
        return run()
    except PostgresUnavailable as unavailable:
        return [Row(name, "-", "-", "n/a", str(unavailable)) for name in names]


def _store_env(url: str, **more: str) -> dict[str, str]:
    return {"IAC_CODE_STORE_URL": url, **more}


# -- first_chunk_store ------------------------------------------------------------------


def run_first_chunk_store(ctx: BenchContext, prompts: int = FIRST_CHUNK_PROMPTS) -> list[Row]:
    names = ["first_chunk_store jsonl", "first_chunk_store postgres"]
    return _unavailable(names, lambda: _first_chunk_store(ctx, prompts))


def _first_chunk_store(ctx: BenchContext, prompts: int) -> list[Row]:
    answer = Turn().text("Terraform plans are read before they are applied.", chunks=4).to_dict()
    beyond: dict[str, list[float]] = {"jsonl": [], "postgres": []}
    workspace = ctx.workspace("first_chunk_store")
    with (
        _scratch_database() as (url, server_text),
        scripted_llm(answer) as (server, turns),
        ctx.spawn(workspace, llm_url=server.url, label="jsonl") as jsonl,
        ctx.spawn(workspace, llm_url=server.url, label="pg", env=_store_env(url)) as database,
    ):
        agents = {"jsonl": jsonl, "postgres": database}
        sessions: dict[str, str] = {}
        for name, agent in agents.items():
            initialize(agent, ctx.timeout)
            sessions[name] = new_session(agent, workspace.project, ctx.timeout)
            prompt(agent, sessions[name], "warm-up")  # loads the model client and its imports
        for number in range(prompts):  # in turn, so both see the same load on the machine
            for name, agent in agents.items():
                total, own = timed_first_chunk(
                    agent, server, turns, sessions[name], f"question {number}"
                )
                beyond[name].append(total - own)
    files, db = summarize(beyond["jsonl"]), summarize(beyond["postgres"])
    # Prompts were paired (one each, back to back): the median of the pairs' differences
    # follows the machine's load far less than the difference of the two medians.
    pairs = zip(beyond["jsonl"], beyond["postgres"], strict=True)
    added = summarize([on_db - on_files for on_files, on_db in pairs]).median
    return [
        Row(
            metric="first_chunk_store jsonl",
            value=timing_text(files),
            target="-",
            verdict="info",
            notes=f"prompt → first chunk beyond the LLM, warm, {prompts} prompts, JSONL files;"
            " prompted in turn with the row below",
            data={"beyond_llm_seconds": files.as_dict(), "samples_ms": ms_samples(beyond["jsonl"])},
        ),
        Row(
            metric="first_chunk_store postgres",
            value=f"{timing_text(db)}; {ms(added)} added (median of paired differences)",
            target="≤ 5 ms median added over JSONL",
            verdict=at_most(added, FIRST_CHUNK_ADDED_TARGET),
            notes=f"the same on {server_text}",
            data={
                "beyond_llm_seconds": db.as_dict(),
                "added_median_ms": round(added * 1000, 3),
                "samples_ms": ms_samples(beyond["postgres"]),
            },
        ),
    ]


# -- list_postgres ----------------------------------------------------------------------


def run_list_postgres(
    ctx: BenchContext, sessions: int = LIST_SESSIONS, runs: int = LIST_RUNS
) -> list[Row]:
    return _unavailable(["list_postgres"], lambda: _list_postgres(ctx, sessions, runs))


def _owner(number: int) -> str:
    return f"user-{number % LIST_OWNERS}"


def _seed_with_copy(url: str, cwd: str, sessions: int) -> float:
    """``sessions`` sessions (owned by :data:`LIST_OWNERS` principals) in one COPY; seconds."""
    import psycopg
    from iac_code.store.pg_store import PostgresSessionStore

    store = PostgresSessionStore(url)
    try:
        store.connect()  # applies the migrations
    finally:
        store.close()
    started = time.perf_counter()
    columns = "id, cwd, title, created_at, updated_at, owner"
    statement = f"COPY iac_sessions ({columns}) FROM STDIN".encode()
    with psycopg.connect(url, autocommit=True) as connection:
        with connection.cursor() as cursor, cursor.copy(statement) as copy:
            for number in range(sessions):
                stamp = utc_now()
                title = f"bench session {number}"
                copy.write_row((new_session_id(), cwd, title, stamp, stamp, _owner(number)))
        connection.execute(b"ANALYZE iac_sessions")
    return time.perf_counter() - started


def _owner_page_ms(list_page: Callable[[], Any]) -> tuple[float, float]:
    """(first call, median of the next ones) of one principal's first page, in ms."""
    samples = []
    for _ in range(1 + OWNER_PAGE_CALLS):
        started = time.perf_counter()
        page, _cursor = list_page()
        samples.append(time.perf_counter() - started)
        if not page:
            raise HarnessError("the owner-filtered page came back empty")
    return samples[0] * 1000, summarize(samples[1:]).median * 1000


def _list_postgres(ctx: BenchContext, sessions: int, runs: int) -> list[Row]:
    from iac_code.store.pg_store import PostgresSessionStore

    workspace = ctx.workspace("list_postgres")
    with _scratch_database() as (url, server_text):
        seed_seconds = _seed_with_copy(url, str(workspace.project), sessions)
        # Right after start-up the first call also waits for the driver's import and the
        # first connection, which the agent makes in the background; both are reported.
        cold = time_first_list(ctx, workspace, sessions, runs, env=_store_env(url))
        timings = time_first_list(
            ctx, workspace, sessions, runs, env=_store_env(url), settle=CONNECTED_AFTER
        )
        store = PostgresSessionStore(url)
        try:
            database_owner = _owner_page_ms(lambda: store.list(owner=_owner(3)))
        finally:
            store.close()
    # The same principal's page on the JSONL index, for comparison.
    files = SessionStore(ctx.workspace("list_owner_jsonl").home)
    for number in range(sessions):
        files.create(new_session_id(), str(workspace.project), owner=_owner(number))
    fresh = SessionStore(files.home)
    files_owner = _owner_page_ms(lambda: fresh.list(owner=_owner(3)))
    cold_median = summarize(cold.first).median
    row = list_row(
        "list_postgres",
        timings,
        f"{sessions} sessions in {server_text} (seeded by one COPY in {seed_seconds:.2f} s),"
        f" {CONNECTED_AFTER:g} s after start-up (the store connected in the background)",
        f"; at once after start-up (driver import and first connection included)"
        f" {ms(cold_median)}; one principal's page ({sessions // LIST_OWNERS} of the"
        f" {sessions}, owner filter, in-process) first {database_owner[0]:.2f} ms,"
        f" then {database_owner[1]:.2f} ms"
        f" (JSONL index: first {files_owner[0]:.2f} ms, then {files_owner[1]:.2f} ms)",
    )
    row.data.update(
        cold_first_samples_ms=ms_samples(cold.first),
        seed_seconds=round(seed_seconds, 3),
        owner_page_ms={"postgres": database_owner, "jsonl": files_owner},
    )
    return [row]


# -- takeover ---------------------------------------------------------------------------


def run_takeover(ctx: BenchContext, trials: int = TAKEOVER_TRIALS) -> list[Row]:
    return _unavailable(["takeover"], lambda: _takeover(ctx, trials))


def _takeover(ctx: BenchContext, trials: int) -> list[Row]:
    samples: list[float] = []
    with _scratch_database() as (url, server_text):
        env = _store_env(url, IAC_CODE_STORE_LEASE_SECONDS=str(TAKEOVER_LEASE_SECONDS))
        workspace = ctx.workspace("takeover")
        with ctx.spawn(workspace, env=env, label="heir") as heir:
            initialize(heir, ctx.timeout)
            wait_until_ready(heir, ctx.timeout)
            for _ in range(trials):
                with ctx.spawn(workspace, env=env, label="owner") as owner:
                    initialize(owner, ctx.timeout)
                    session_id = new_session(owner, workspace.project, ctx.timeout)
                    if _load(heir, session_id, workspace.project, ctx.timeout) is not None:
                        raise HarnessError("a second agent loaded a session whose owner lives")
                    os.kill(owner.pid, signal.SIGKILL)  # a crash: the lease is never released
                    killed_at = time.monotonic()
                    samples.append(_load_until_taken(heir, session_id, workspace, killed_at, ctx))
                heir.request("session/close", {"sessionId": session_id}, timeout=ctx.timeout)
    summary = summarize(samples)
    return [
        Row(
            metric="takeover",
            value=timing_text(summary),
            target=f"≤ lease expiry + {TAKEOVER_SLACK_SECONDS:g} s slack"
            f" ({TAKEOVER_LEASE_SECONDS:g} s + {TAKEOVER_SLACK_SECONDS:g} s here)",
            verdict=at_most(summary.max, TAKEOVER_LEASE_SECONDS + TAKEOVER_SLACK_SECONDS),
            notes=f"kill -9 of the agent holding the session → another agent's session/load"
            f" succeeds; lease expiry {TAKEOVER_LEASE_SECONDS:g} s (renewed every"
            f" {TAKEOVER_LEASE_SECONDS / 3:.2f} s; product default 15 s), retried every"
            f" {ms(_RETRY_PAUSE)}; {server_text}; before each kill the live owner's session was"
            f" refused each time ({trials} trials)",
            data={
                "seconds": summary.as_dict(),
                "samples_ms": ms_samples(samples),
                "lease_seconds": TAKEOVER_LEASE_SECONDS,
            },
        )
    ]


def _load(agent: AgentProcess, session_id: str, cwd: Any, timeout: float) -> float | None:
    """``session/load``: its answer's arrival time, or None when refused as in use."""
    params = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
    reply = agent.request("session/load", params, timeout=timeout, keep=lambda _incoming: False)
    if reply.error is None:
        return reply.received
    if reply.error.get("code") != -32602:
        raise HarnessError(f"session/load failed: {reply.error}")
    return None


def _load_until_taken(
    heir: AgentProcess, session_id: str, workspace: Any, killed_at: float, ctx: BenchContext
) -> float:
    deadline = killed_at + 5 * TAKEOVER_LEASE_SECONDS + ctx.timeout
    while time.monotonic() < deadline:
        answered = _load(heir, session_id, workspace.project, ctx.timeout)
        if answered is not None:
            return answered - killed_at
        time.sleep(_RETRY_PAUSE)
    raise HarnessError("the session was never taken over after its owner was killed")
