"""A stdio agent on a database store connects it in the background at start-up, so its first
``session/list`` does not wait for the driver's import and the first connection (the
``list_postgres`` bench row); an unreachable database is left to the first request."""

from __future__ import annotations

from pathlib import Path

import pytest
from iac_code.settings import Settings
from iac_code.stdio_runtime import warm_database_store
from iac_code.store.open_store import open_store
from iac_code.store.pg_store import PostgresSessionStore

from tests.agent.store.postgres_server import PostgresServer, free_port

pytestmark = pytest.mark.xdist_group("postgres")


def test_the_store_is_connected_before_the_first_request(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.url(schema=postgres_server.new_schema())
    settings = Settings(home=tmp_path, store_url=url, store_lease_seconds=7.5)
    warm_database_store(settings)
    store = open_store(settings)  # the very object the agent will use
    assert isinstance(store, PostgresSessionStore)
    try:
        assert store._pool is not None  # connected, migrations applied
        assert store.list() == ([], None)
    finally:
        store.close()


def test_an_unreachable_database_is_left_to_the_first_request(tmp_path: Path) -> None:
    port = free_port()
    url = f"postgresql://nobody@127.0.0.1:{port}/none?connect_timeout=2"
    settings = Settings(home=tmp_path, store_url=url, store_lease_seconds=7.25)
    store = open_store(settings)
    assert isinstance(store, PostgresSessionStore)
    try:
        warm_database_store(settings)  # logs, never raises: the server keeps starting
        assert store._pool is None
    finally:
        store.close()
    warm_database_store(Settings(home=tmp_path))  # JSONL: nothing to connect
