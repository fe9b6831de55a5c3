"""Fixtures of the store tests: the session-wide PostgreSQL server and the two backends."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from iac_code.store import SessionStore
from iac_code.store.backend import SessionStoreBackend

from tests.agent.store.postgres_server import PostgresServer, running_server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One server for the whole run (per xdist worker; the PG modules share one group)."""
    with running_server() as server:
        yield server


@dataclass
class Backend:
    """One store implementation under test, and how to make more stores on the same data."""

    kind: str
    store: SessionStoreBackend
    #: A second store on the same data (another process would see exactly this).
    another: Callable[[], SessionStoreBackend]
    #: A store whose every write the storage refuses as read-only, while the block lasts.
    read_only: Callable[[], AbstractContextManager[SessionStoreBackend]]
    _closers: list[Callable[[], None]] = field(default_factory=list)


def _jsonl(tmp_path: Path) -> Backend:
    @contextmanager
    def read_only() -> Iterator[SessionStoreBackend]:
        # Root ignores chmod: the file system's answer is injected (as in the write-error tests).
        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))

        real_open = os.open

        def open_read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                refuse()
            return real_open(path, flags, *args, **kwargs)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "write", refuse)
            patch.setattr(os, "open", open_read_only)
            patch.setattr(os, "replace", refuse)
            patch.setattr(os, "mkdir", refuse)
            yield SessionStore(tmp_path)

    return Backend("jsonl", SessionStore(tmp_path), lambda: SessionStore(tmp_path), read_only)


def _postgres(server: PostgresServer) -> Backend:
    from iac_code.store.pg_store import PostgresSessionStore

    schema = server.new_schema()
    stores: list[PostgresSessionStore] = []

    def make(**options: str) -> SessionStoreBackend:
        store = PostgresSessionStore(server.url(schema=schema, **options))
        stores.append(store)
        return store

    @contextmanager
    def read_only() -> Iterator[SessionStoreBackend]:
        yield make(default_transaction_read_only="on")

    backend = Backend("postgres", make(), make, read_only)

    def close() -> None:
        for store in stores:
            store.close()

    backend._closers.append(close)
    return backend


@pytest.fixture(params=["jsonl", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each contract test runs once per backend; the PostgreSQL one skips without a server."""
    if request.param == "jsonl":
        yield _jsonl(tmp_path)
        return
    made = _postgres(request.getfixturevalue("postgres_server"))
    try:
        yield made
    finally:
        for close in made._closers:
            close()
