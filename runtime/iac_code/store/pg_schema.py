"""The PostgreSQL store's tables, created and upgraded by numbered migrations.

Every process applies the missing migrations when it first connects, holding a
transaction-level advisory lock, so replicas starting together do not race: the first one
migrates, the others wait for it and then find nothing to do. A migration is never edited
once released; a change is a new entry at the end of :data:`MIGRATIONS`.

Timestamps are kept as the store's fixed-width UTC strings (see :mod:`iac_code.store.meta`),
so listing order and ``session/list`` cursors are exactly those of the JSONL store. Events
are ``json`` (not ``jsonb``): it keeps the text as written, so key order survives and a
``\\u0000`` inside a string (which ``jsonb`` refuses) is stored like any other character.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from psycopg import Connection

#: Arbitrary constant naming the migration lock among the database's advisory locks.
MIGRATION_LOCK_KEY: Final = 0x1AC_C0DE_0037

MIGRATIONS: Final[tuple[str, ...]] = (
    # 1: sessions, their events with a per-session sequence number, and writer leases.
    """
    CREATE TABLE iac_sessions (
        id text PRIMARY KEY,
        cwd text NOT NULL,
        title text,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        parent_id text,
        additional_directories jsonb NOT NULL DEFAULT '[]',
        -- the sequence number the next appended event gets
        next_seq bigint NOT NULL DEFAULT 0
    );
    CREATE INDEX iac_sessions_recent ON iac_sessions (updated_at DESC, id DESC);
    CREATE INDEX iac_sessions_cwd_recent ON iac_sessions (cwd, updated_at DESC, id DESC);
    CREATE TABLE iac_session_events (
        session_id text NOT NULL REFERENCES iac_sessions (id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        event json NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE SEQUENCE iac_fencing_tokens;
    CREATE TABLE iac_session_leases (
        session_id text PRIMARY KEY REFERENCES iac_sessions (id) ON DELETE CASCADE,
        owner text NOT NULL,
        token bigint NOT NULL,
        expires_at timestamptz NOT NULL
    );
    """,
    # 2: the principal a session belongs to on a server shared by several users (--auth).
    """
    ALTER TABLE iac_sessions ADD COLUMN owner text;
    """,
    # 3: one principal's session/list walks its own sessions only (WHERE owner = ...).
    """
    CREATE INDEX iac_sessions_owner_recent ON iac_sessions (owner, updated_at DESC, id DESC);
    """,
)


def schema_version(connection: Connection[Any]) -> int:
    """The newest migration applied to the database (0 for an empty one)."""
    row = connection.execute("SELECT to_regclass('iac_schema_migrations') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    row = connection.execute(
        "SELECT coalesce(max(version), 0) FROM iac_schema_migrations"
    ).fetchone()
    return int(row[0]) if row else 0


def migrate(connection: Connection[Any]) -> int:
    """Bring the database up to the newest schema; returns how many migrations ran.

    An up-to-date database is only read, so a role without the right to create tables (a
    read-only replica user) can still use it.
    """
    if schema_version(connection) >= len(MIGRATIONS):
        return 0
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
        connection.execute(
            "CREATE TABLE IF NOT EXISTS iac_schema_migrations ("
            " version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = schema_version(connection)  # another process may have migrated meanwhile
        for version, sql in enumerate(MIGRATIONS[current:], current + 1):
            connection.execute(sql.encode())
            connection.execute(
                "INSERT INTO iac_schema_migrations (version) VALUES (%s)", (version,)
            )
        return len(MIGRATIONS) - current
