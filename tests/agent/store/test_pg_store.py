"""What only the PostgreSQL store has: migrations, sequence numbers, leases and fencing,
privileges and an unreachable server. The shared behaviour is in test_store_contract.py."""

from __future__ import annotations

import errno
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from iac_code.store import SessionLockedError, StoreWriteError, new_session_id
from iac_code.store.pg_schema import MIGRATIONS
from iac_code.store.pg_store import PostgresSessionStore

from tests.agent.store.postgres_server import PostgresServer

pytestmark = pytest.mark.xdist_group("postgres")


@pytest.fixture
def schema(postgres_server: PostgresServer) -> str:
    return postgres_server.new_schema()


@pytest.fixture
def stores(postgres_server: PostgresServer, schema: str) -> Iterator[list[PostgresSessionStore]]:
    made: list[PostgresSessionStore] = []
    yield made
    for store in made:
        store.close()


def _store(
    server: PostgresServer, schema: str, made: list[PostgresSessionStore], **kwargs: Any
) -> PostgresSessionStore:
    store = PostgresSessionStore(server.url(schema=schema), **kwargs)
    made.append(store)
    return store


def _query(server: PostgresServer, schema: str, sql: str, *args: object) -> list[Any]:
    import psycopg

    with psycopg.connect(server.url(schema=schema), autocommit=True) as connection:
        cursor = connection.execute(sql.encode(), args or None)
        return cursor.fetchall() if cursor.description else []


def test_replicas_starting_together_migrate_once(
    postgres_server: PostgresServer, schema: str, stores: list[PostgresSessionStore]
) -> None:
    replicas = [_store(postgres_server, schema, stores) for _ in range(6)]
    start = threading.Barrier(len(replicas))
    errors: list[BaseException] = []

    def first_use(store: PostgresSessionStore) -> None:
        try:
            start.wait(timeout=30)
            store.list()
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=first_use, args=(store,)) for store in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    versions = _query(postgres_server, schema, "SELECT version FROM iac_schema_migrations")
    assert sorted(row[0] for row in versions) == list(range(1, len(MIGRATIONS) + 1))


def test_events_carry_a_per_session_sequence_number(
    postgres_server: PostgresServer, schema: str, stores: list[PostgresSessionStore]
) -> None:
    store = _store(postgres_server, schema, stores)
    first, second = new_session_id(), new_session_id()
    for session_id in (first, second):
        store.create(session_id, "/w")
    store.append(first, {"n": 0})
    store.append_many(second, [{"n": 0}, {"n": 1}])
    store.append_many(first, [{"n": 1}, {"n": 2}])
    fork = new_session_id()
    store.fork(first, fork)
    store.append(fork, {"n": 3})
    rows = _query(
        postgres_server,
        schema,
        "SELECT session_id, seq, (event->>'n')::int FROM iac_session_events"
        " ORDER BY session_id, seq",
    )
    by_session: dict[str, list[tuple[int, int]]] = {}
    for session_id, seq, n in rows:
        by_session.setdefault(session_id, []).append((seq, n))
    assert by_session[first] == [(0, 0), (1, 1), (2, 2)]
    assert by_session[second] == [(0, 0), (1, 1)]
    assert by_session[fork] == [(0, 0), (1, 1), (2, 2), (3, 3)]


def test_a_writer_whose_lease_lapsed_can_never_write_again(
    postgres_server: PostgresServer, schema: str, stores: list[PostgresSessionStore]
) -> None:
    """The owner is paused past its lease (simulated by expiring the row): another store takes
    the session over with a larger token, and the old owner's appends are refused by the
    token check inside the append statement, so nothing interleaves."""
    paused = _store(postgres_server, schema, stores)
    successor = _store(postgres_server, schema, stores)
    session_id = new_session_id()
    paused.create(session_id, "/w")
    old = paused.lock(session_id)
    paused.append(session_id, {"by": "old", "n": 1})
    with pytest.raises(SessionLockedError):
        successor.lock(session_id)  # a live lease keeps others out

    _query(
        postgres_server,
        schema,
        "UPDATE iac_session_leases SET expires_at = now() - interval '1 second'",
    )
    new = successor.lock(session_id)
    assert new.token > old.token
    successor.append(session_id, {"by": "new", "n": 2})
    with pytest.raises(StoreWriteError, match="took the session over") as caught:
        paused.append(session_id, {"by": "old", "n": 3})
    assert caught.value.errno == errno.EBUSY
    with pytest.raises(StoreWriteError):
        paused.append_many(session_id, [{"by": "old", "n": 4}])
    with pytest.raises(StoreWriteError, match="took the session over"):
        paused.update_meta(session_id, title="late title")  # metadata is fenced too
    assert successor.update_meta(session_id, title="current").title == "current"
    successor.append(session_id, {"by": "new", "n": 5})
    assert [event["n"] for event in successor.load_events(session_id)] == [1, 2, 5]
    old.release()  # the lapsed holder letting go does not free the successor's lease
    with pytest.raises(SessionLockedError):
        _store(postgres_server, schema, stores).lock(session_id)
    new.release()
    assert _query(postgres_server, schema, "SELECT * FROM iac_session_leases") == []


def test_a_revoked_privilege_is_a_write_error_and_reads_still_work(
    postgres_server: PostgresServer, schema: str, stores: list[PostgresSessionStore]
) -> None:
    owner = _store(postgres_server, schema, stores)
    session_id = new_session_id()
    owner.create(session_id, "/w")
    owner.append(session_id, {"n": 1})
    reader = f"reader_{schema}"
    postgres_server.execute(
        f"CREATE ROLE {reader} LOGIN",
        f"GRANT USAGE ON SCHEMA {schema} TO {reader}",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {reader}",
    )
    try:
        limited = PostgresSessionStore(postgres_server.url(schema=schema, user=reader))
        stores.append(limited)
        assert limited.load_events(session_id) == [{"n": 1}]
        with pytest.raises(StoreWriteError) as caught:
            limited.append(session_id, {"n": 2})
        assert caught.value.errno == errno.EACCES
        assert owner.load_events(session_id) == [{"n": 1}]
    finally:
        limited.close()
        postgres_server.execute(f"DROP OWNED BY {reader}", f"DROP ROLE {reader}")


def test_an_unreachable_server_is_a_store_error_not_a_crash() -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = PostgresSessionStore(f"postgresql://iac@127.0.0.1:{port}/none", connect_timeout=1)
    try:
        with pytest.raises(StoreWriteError, match="PostgreSQL is unreachable"):
            store.get_meta(new_session_id())
        with pytest.raises(StoreWriteError, match="PostgreSQL"):
            store.create(new_session_id(), "/w")
    finally:
        store.close()
