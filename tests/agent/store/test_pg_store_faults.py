"""The PostgreSQL store when the database misbehaves: a restart, a server that does not
answer, a lease whose release could not reach the database. (The whole fault table, with
replicas and HAProxy, is tests/agent/remote/test_fault_table.py.)"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from iac_code.store import (
    SessionLockedError,
    SessionTakenOverError,
    StoreUnreachableError,
    StoreWriteError,
    new_session_id,
)
from iac_code.store.pg_store import PostgresSessionStore

from tests.agent.store.postgres_server import PostgresServer, free_port

pytestmark = [pytest.mark.xdist_group("postgres"), pytest.mark.timing]


@pytest.fixture
def store_url(postgres_server: PostgresServer) -> str:
    return postgres_server.url(schema=postgres_server.new_schema())


@pytest.fixture
def stores() -> Iterator[list[PostgresSessionStore]]:
    made: list[PostgresSessionStore] = []
    yield made
    for store in made:
        store.close()


def test_a_restart_of_the_database_is_invisible_to_the_next_call(
    postgres_server: PostgresServer, store_url: str, stores: list[PostgresSessionStore]
) -> None:
    """Pooled connections are checked before use: the ones the restart cut are replaced
    instead of failing the first calls after it."""
    store = PostgresSessionStore(store_url)
    stores.append(store)
    session_id = new_session_id()
    store.create(session_id, "/w")
    lease = store.lock(session_id)
    store.append(session_id, {"n": 1})
    postgres_server.stop("fast")
    postgres_server.start()
    store.append(session_id, {"n": 2})
    assert store.load_events(session_id) == [{"n": 1}, {"n": 2}]
    lease.release()


def test_a_server_that_does_not_answer_is_unreachable_within_the_urls_connect_timeout() -> None:
    port = free_port()  # nobody listens on it
    store = PostgresSessionStore(f"postgresql://iac@127.0.0.1:{port}/none?connect_timeout=1")
    try:
        assert store.connect_timeout == 1
        with pytest.raises(StoreUnreachableError, match="PostgreSQL is unreachable"):
            store.append(new_session_id(), {"n": 1})
    finally:
        store.close()
    assert PostgresSessionStore("postgresql://iac@127.0.0.1/none").connect_timeout == 10


def test_building_the_store_imports_no_psycopg() -> None:
    """``iac-code acp --store postgresql://...`` builds the store at start-up: psycopg (and
    the URL's connect_timeout with it) is only needed by the first call."""
    probe = (
        "import sys\n"
        "from iac_code.store.pg_store import PostgresSessionStore\n"
        "store = PostgresSessionStore('postgresql://iac@127.0.0.1/none?connect_timeout=3')\n"
        "print(sorted(name for name in sys.modules if name.startswith('psycopg')))\n"
        "print(store.connect_timeout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines() == ["[]", "3.0"]


def test_a_store_takes_back_at_once_its_own_lease_whose_release_failed(
    store_url: str, stores: list[PostgresSessionStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release that could not reach the database leaves the lease row behind: other
    processes stay out until it expires, but the process that wrote it may open the session
    again at once (a turn that failed while the database was down, then a load)."""
    owner, other = PostgresSessionStore(store_url), PostgresSessionStore(store_url)
    stores.extend([owner, other])
    session_id = new_session_id()
    owner.create(session_id, "/w")
    lease = owner.lock(session_id)

    def unreachable(_lease: object) -> None:
        raise StoreUnreachableError("cannot unlock: PostgreSQL is unreachable")

    monkeypatch.setattr(owner, "_release_row", unreachable)
    lease.release()  # logged, not raised
    monkeypatch.undo()
    with pytest.raises(SessionLockedError):
        other.lock(session_id)
    again = owner.lock(session_id)
    assert again.token > lease.token
    owner.append(session_id, {"n": 1})  # the new token is the one the row carries
    with pytest.raises(SessionLockedError):
        owner.lock(session_id)  # held now: a second lock in the same process is refused
    again.release()
    other.lock(session_id).release()


def test_a_taken_over_session_is_its_own_kind_of_write_error(
    postgres_server: PostgresServer, store_url: str, stores: list[PostgresSessionStore]
) -> None:
    paused, successor = PostgresSessionStore(store_url), PostgresSessionStore(store_url)
    stores.extend([paused, successor])
    session_id = new_session_id()
    paused.create(session_id, "/w")
    paused.lock(session_id)
    import psycopg

    with psycopg.connect(store_url, autocommit=True) as connection:
        connection.execute("UPDATE iac_session_leases SET expires_at = now() - interval '1 s'")
    successor.lock(session_id)
    with pytest.raises(SessionTakenOverError) as caught:
        paused.append(session_id, {"late": True})
    assert isinstance(caught.value, StoreWriteError)  # callers of the old kind still catch it
    assert successor.load_events(session_id) == []
