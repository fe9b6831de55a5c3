"""Which session store a process uses: the JSONL files, or the database ``--store`` names."""

from __future__ import annotations

import importlib.util
import threading
from typing import TYPE_CHECKING

from .session_store import SessionStore

if TYPE_CHECKING:
    from iac_code.settings import Settings

    from .backend import SessionStoreBackend
    from .pg_store import PostgresSessionStore

#: What the ``postgres`` extra installs (checked at start, imported on first use).
POSTGRES_EXTRA_MODULES = ("psycopg", "psycopg_pool")

#: One database store per URL and process: every connection of a server shares its pool
#: and its leases.
_database_stores: dict[tuple[str, float], PostgresSessionStore] = {}
_database_stores_mutex = threading.Lock()


def check_store_extra() -> None:
    """Raise SettingsError (one line, exit 2) when a database store is configured but the
    ``postgres`` extra is not installed."""
    from iac_code.settings_core import SettingsError

    missing = [name for name in POSTGRES_EXTRA_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise SettingsError(
            f"a postgresql:// session store needs {' and '.join(missing)}: install the"
            " postgres extra (pip install 'iac-code-acp[postgres]')"
        )


def open_store(settings: Settings) -> SessionStoreBackend:
    """The store ``settings`` configure: JSONL files under ``home`` unless ``store_url``."""
    if not settings.store_url:
        return SessionStore(settings.home)
    from .pg_store import PostgresSessionStore

    key = (settings.store_url, settings.store_lease_seconds)
    with _database_stores_mutex:
        store = _database_stores.get(key)
        if store is None:
            store = PostgresSessionStore(
                settings.store_url, lease_seconds=settings.store_lease_seconds
            )
            _database_stores[key] = store
        return store
