"""``PostgresSessionStore``: the session store in a PostgreSQL database (``--store URL``).

Several ``iac-code acp`` processes (stdio or HTTP replicas, on one machine or many) share one
database: listing sees every session, and a lease per open session keeps it to one writer
(:mod:`iac_code.store.pg_lease`). Events are rows numbered per session (``seq``), read back in
that order; nothing is parsed out of JSON Lines.

psycopg (3) and psycopg-pool are the ``postgres`` extra and are imported only when this store
is opened. The pool connects on first use, not at start, so an unreachable database is
answered as a failed store operation (-32603 naming the cause) and the process stays up.
"""

from __future__ import annotations

import errno as errno_codes
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .cursor import encode_cursor
from .errors import (
    InvalidSessionIdError,
    SessionExistsError,
    SessionLockedError,
    SessionNotFoundError,
    SessionTakenOverError,
    StoreUnreachableError,
    StoreWriteError,
)
from .ids import is_valid_session_id
from .jsonl import encode_line
from .meta import SessionMeta, normalize_timestamp, utc_now
from .pg_lease import (
    ACQUIRE_SQL,
    DEFAULT_LEASE_SECONDS,
    RELEASE_SQL,
    RENEW_SQL,
    Lease,
    LeaseRenewer,
    new_owner_name,
)
from .pg_schema import migrate
from .session_store import DEFAULT_PAGE_SIZE, UNSET, _Unset, listing_filter

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

logger = logging.getLogger(__name__)

#: Seconds to wait for a connection before a store call fails (the database is down), unless
#: the URL's ``connect_timeout`` says otherwise.
CONNECT_TIMEOUT = 10.0
POOL_MAX_SIZE = 4

_COLUMNS = "id, cwd, title, created_at, updated_at, parent_id, additional_directories, owner"

# Appends claim their sequence numbers by bumping the session's counter; the row lock this
# takes orders concurrent appends. With a lease the counter is only bumped while the lease
# row still carries our token, in this same statement (fencing).
_APPEND_SQL = """
WITH claimed AS (
    UPDATE iac_sessions SET next_seq = next_seq + %(count)s
    WHERE id = %(id)s {fence}
    RETURNING next_seq - %(count)s AS first
)
INSERT INTO iac_session_events (session_id, seq, event)
SELECT %(id)s, claimed.first + item.ord - 1, item.event::json
FROM claimed, unnest(%(events)s::text[]) WITH ORDINALITY AS item (event, ord)
"""
_FENCE = (
    "AND EXISTS (SELECT 1 FROM iac_session_leases WHERE session_id = %(id)s AND token = %(token)s)"
)


def _meta_from_row(row: Sequence[Any]) -> SessionMeta:
    session_id, cwd, title, created_at, updated_at, parent_id, directories, owner = row
    return SessionMeta(
        session_id, cwd, created_at, updated_at, title, parent_id, tuple(directories or ()), owner
    )


#: SQLSTATEs of a server going away: admin_shutdown, crash_shutdown, cannot_connect_now.
_SHUTDOWN_STATES = frozenset({"57P01", "57P02", "57P03"})


def _connection_lost(error: Exception) -> bool:
    """Whether a psycopg error means the database did not answer (down, restarting, the
    connection broke) rather than that it refused the statement."""
    import psycopg

    if not isinstance(error, psycopg.OperationalError):
        return False
    state = error.sqlstate
    # libpq's own failures (refused, reset, closed) carry no SQLSTATE; class 08 is the
    # server's "connection exception".
    return state is None or state.startswith("08") or state in _SHUTDOWN_STATES


def _checkout_timeout(url: str) -> float:
    """How long a call waits for a pooled connection: the URL's ``connect_timeout`` when it
    names one (the libpq option operators already set for a database far away), else
    :data:`CONNECT_TIMEOUT`."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        value = conninfo_to_dict(url).get("connect_timeout")
        seconds = float(value) if value is not None else 0.0
    except (ValueError, psycopg.Error):  # a URL libpq refuses: the first call says so
        return CONNECT_TIMEOUT
    return seconds if seconds > 0 else CONNECT_TIMEOUT


def _cause_errno(error: Exception) -> int | None:
    """The errno whose wire message fits a database refusal (see agent.store_errors)."""
    from psycopg import errors

    if isinstance(error, errors.ReadOnlySqlTransaction):
        return errno_codes.EROFS
    if isinstance(error, errors.InsufficientPrivilege):
        return errno_codes.EACCES
    if isinstance(error, errors.DiskFull):
        return errno_codes.ENOSPC
    return None


class PostgresSessionStore:
    """Sessions in the PostgreSQL database at ``url`` (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        connect_timeout: float | None = None,
    ) -> None:
        self.url = url
        self.lease_seconds = lease_seconds
        self._connect_timeout = connect_timeout
        self.owner = new_owner_name()
        self._pool: ConnectionPool[Any] | None = None
        self._pool_mutex = threading.Lock()
        self._held: dict[str, Lease] = {}
        self._acquiring: set[str] = set()
        self._held_mutex = threading.Lock()
        self._renewer = LeaseRenewer(lease_seconds / 3, self._renew_all)

    @property
    def connect_timeout(self) -> float:
        """Seconds a call waits for a pooled connection: the constructor's argument, else
        read from the URL on first use (so that building the store at start-up, before any
        call, does not import psycopg)."""
        if self._connect_timeout is None:
            self._connect_timeout = _checkout_timeout(self.url)
        return self._connect_timeout

    # -- connections --------------------------------------------------------------------

    def _open_pool(self) -> ConnectionPool[Any]:
        with self._pool_mutex:
            if self._pool is not None:
                return self._pool
            from psycopg_pool import ConnectionPool

            pool: ConnectionPool[Any] = ConnectionPool(
                self.url,
                min_size=1,
                max_size=POOL_MAX_SIZE,
                kwargs={"autocommit": True},
                timeout=self.connect_timeout,
                # A pooled connection is checked before each use: after a database restart
                # the stale ones are replaced instead of failing the next calls.
                check=ConnectionPool.check_connection,
                open=False,
                name="iac-code-store",
            )
            pool.open(wait=False)
            try:
                with pool.connection() as connection:
                    applied = migrate(connection)
            except BaseException:
                pool.close()
                raise
            if applied:
                logger.info("session store: applied %d schema migration(s)", applied)
            self._pool = pool
            return pool

    @contextmanager
    def _connection(self, action: str) -> Iterator[Connection[Any]]:
        """A pooled connection; any database failure becomes StoreWriteError(action)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._open_pool().connection() as connection:
                yield connection
        except PoolTimeout as error:  # before psycopg.Error, of which it is a kind
            raise StoreUnreachableError(f"{action}: PostgreSQL is unreachable ({error})") from error
        except psycopg.Error as error:
            text = str(error).strip()
            reason = text.splitlines()[0] if text else type(error).__name__
            cause = _cause_errno(error)
            if cause is None and _connection_lost(error):
                raise StoreUnreachableError(
                    f"{action}: PostgreSQL is unreachable ({reason})"
                ) from error
            raise StoreWriteError(f"{action}: PostgreSQL: {reason}", errno=cause) from error

    def connect(self) -> None:
        """Connect now (import the driver, open the pool, apply migrations) instead of on
        the first request: a starting server calls it in the background, so its first
        ``session/list`` does not pay for it. Raises StoreWriteError when unreachable."""
        with self._connection("cannot connect to the session store"):
            pass

    def close(self) -> None:
        """Release held leases and close the pool (tests, and a server shutting down)."""
        with self._held_mutex:
            leases = list(self._held.values())
        for lease in leases:
            lease.release()
        self._renewer.stop()
        with self._pool_mutex:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    # -- creation -----------------------------------------------------------------------

    def create(
        self,
        session_id: str,
        cwd: str,
        *,
        additional_directories: Sequence[str] = (),
        title: str | None = None,
        parent_id: str | None = None,
        owner: str | None = None,
    ) -> SessionMeta:
        """Create an empty session; raises SessionExistsError when the id is taken."""
        if not is_valid_session_id(session_id):
            raise InvalidSessionIdError(session_id)
        meta = SessionMeta.new(
            session_id,
            cwd,
            additional_directories=additional_directories,
            title=title,
            parent_id=parent_id,
            owner=owner,
        )
        with self._connection(f"cannot create session {session_id!r}") as connection:
            self._insert_meta(connection, meta, next_seq=0)
        return meta

    def _insert_meta(self, connection: Connection[Any], meta: SessionMeta, next_seq: int) -> None:
        from psycopg.types.json import Jsonb

        row = connection.execute(
            f"INSERT INTO iac_sessions ({_COLUMNS}, next_seq)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
            (
                meta.session_id,
                meta.cwd,
                meta.title,
                meta.created_at,
                meta.updated_at,
                meta.parent_id,
                Jsonb(list(meta.additional_directories)),
                meta.owner,
                next_seq,
            ),
        ).fetchone()
        if row is None:
            raise SessionExistsError(meta.session_id)

    def fork(self, source_id: str, new_id: str, *, cwd: str | None = None) -> SessionMeta:
        """Create ``new_id`` holding a copy of every event of ``source_id`` (one transaction)."""
        if not is_valid_session_id(new_id):
            raise InvalidSessionIdError(new_id)
        action = f"cannot fork session {source_id!r}"
        with self._connection(action) as connection, connection.transaction():
            source = self._select_meta(connection, source_id, lock=True)
            if source is None:
                raise SessionNotFoundError(source_id)
            meta = source.forked(new_id, cwd)
            row = connection.execute(
                "SELECT next_seq FROM iac_sessions WHERE id = %s", (source_id,)
            ).fetchone()
            self._insert_meta(connection, meta, next_seq=row[0] if row else 0)
            connection.execute(
                "INSERT INTO iac_session_events (session_id, seq, event)"
                " SELECT %s, seq, event FROM iac_session_events WHERE session_id = %s",
                (new_id, source_id),
            )
        return meta

    # -- metadata -----------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return self.get_meta(session_id) is not None

    def get_meta(self, session_id: str) -> SessionMeta | None:
        if not is_valid_session_id(session_id):
            return None
        with self._connection(f"cannot read session {session_id!r}") as connection:
            return self._select_meta(connection, session_id)

    def _select_meta(
        self, connection: Connection[Any], session_id: str, *, lock: bool = False
    ) -> SessionMeta | None:
        if not is_valid_session_id(session_id):
            return None
        suffix = " FOR SHARE" if lock else ""
        row = connection.execute(
            f"SELECT {_COLUMNS} FROM iac_sessions WHERE id = %s{suffix}", (session_id,)
        ).fetchone()
        return None if row is None else _meta_from_row(row)

    def update_meta(
        self,
        session_id: str,
        *,
        title: str | _Unset | None = UNSET,
        updated_at: datetime | str | None = None,
        additional_directories: Sequence[str] | _Unset = UNSET,
    ) -> SessionMeta:
        """Change metadata and return the new value (same rules as SessionStore)."""
        from psycopg import sql
        from psycopg.types.json import Jsonb

        if not is_valid_session_id(session_id):
            raise SessionNotFoundError(session_id)
        stamp = utc_now() if updated_at is None else normalize_timestamp(updated_at)
        changes: list[tuple[str, object]] = [("updated_at", stamp)]
        if not isinstance(title, _Unset):
            changes.append(("title", title))
        if not isinstance(additional_directories, _Unset):
            changes.append(("additional_directories", Jsonb(list(additional_directories))))
        token = self._held_token(session_id)
        query = sql.SQL("UPDATE iac_sessions SET {} WHERE id = %(id)s {} RETURNING {}").format(
            sql.SQL(", ").join(
                sql.SQL("{} = {}").format(sql.Identifier(name), sql.Placeholder(name))
                for name, _ in changes
            ),
            sql.SQL("" if token is None else _FENCE),
            sql.SQL(_COLUMNS),
        )
        values = {**dict(changes), "id": session_id, "token": token}
        action = f"cannot update session {session_id!r}"
        with self._connection(action) as connection:
            row = connection.execute(query, values).fetchone()
            exists = row is not None or self._select_meta(connection, session_id) is not None
        if row is None and exists:
            raise _taken_over(action)  # only a fenced update misses an existing session
        if row is None:
            raise SessionNotFoundError(session_id)
        return _meta_from_row(row)

    def _held_token(self, session_id: str) -> int | None:
        """The fencing token of this store's lease on the session, if it holds one."""
        with self._held_mutex:
            lease = self._held.get(session_id)
        return None if lease is None else lease.token

    # -- events -------------------------------------------------------------------------

    def append(self, session_id: str, event: dict[str, Any]) -> None:
        """Append one event; raises like SessionStore.append, and StoreWriteError when this
        process held the session's lease and another process has since taken it over."""
        self._append_encoded(session_id, [_encode(event)])

    def append_many(self, session_id: str, events: Iterable[dict[str, Any]]) -> None:
        """Append several events in one statement; on failure none of them is kept."""
        encoded = [_encode(event) for event in events]
        if encoded:
            self._append_encoded(session_id, encoded)

    def _append_encoded(self, session_id: str, encoded: list[str]) -> None:
        if not is_valid_session_id(session_id):
            raise SessionNotFoundError(session_id)
        token = self._held_token(session_id)
        statement = _APPEND_SQL.format(fence="" if token is None else _FENCE)
        parameters = {"id": session_id, "count": len(encoded), "events": encoded, "token": token}
        action = f"cannot append to session {session_id!r}"
        with self._connection(action) as connection:
            inserted = connection.execute(statement.encode(), parameters).rowcount
            if inserted:
                return
            exists = self._select_meta(connection, session_id) is not None
        if not exists:
            raise SessionNotFoundError(session_id)
        raise _taken_over(action)

    def load_events(self, session_id: str) -> list[dict[str, Any]]:
        """Every event of the session, in sequence order (one query)."""
        if not is_valid_session_id(session_id):
            raise SessionNotFoundError(session_id)
        with self._connection(f"cannot read session {session_id!r}") as connection:
            rows = connection.execute(
                "SELECT event.event FROM iac_sessions session"
                " LEFT JOIN iac_session_events event ON event.session_id = session.id"
                " WHERE session.id = %s ORDER BY event.seq",
                (session_id,),
            ).fetchall()
        if not rows:
            raise SessionNotFoundError(session_id)
        return [row[0] for row in rows if row[0] is not None]

    # -- listing ------------------------------------------------------------------------

    def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        owner: str | _Unset | None = UNSET,
    ) -> tuple[list[SessionMeta], str | None]:
        """One page of sessions, most recently updated first (ties: larger id first);
        ``owner`` as in SessionStore.list, answered from the (owner, updated_at, id) index."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        listing = listing_filter(owner, cursor)
        conditions: list[str] = []
        values: list[object] = []
        if listing.by_owner and listing.owner is None:
            conditions.append("owner IS NULL")
        elif listing.by_owner:
            conditions.append("owner = %s")
            values.append(listing.owner)
        if cwd is not None:
            conditions.append("cwd = %s")
            values.append(cwd)
        if listing.after is not None:
            conditions.append("(updated_at, id) < (%s, %s)")
            values.extend(listing.after)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        query = (
            f"SELECT {_COLUMNS} FROM iac_sessions{where} ORDER BY updated_at DESC, id DESC LIMIT %s"
        )
        with self._connection("cannot list sessions") as connection:
            rows = connection.execute(query.encode(), (*values, limit + 1)).fetchall()
        page = [_meta_from_row(row) for row in rows[:limit]]
        next_cursor = None
        if len(rows) > limit and page:
            next_cursor = encode_cursor(
                page[-1].updated_at, page[-1].session_id, scope=listing.scope
            )
        return page, next_cursor

    # -- deletion -----------------------------------------------------------------------

    def delete(self, session_id: str) -> None:
        """Remove the session and its events; unknown ids are ignored. Raises
        SessionLockedError while another process holds a live lease on it."""
        if not is_valid_session_id(session_id):
            return
        with self._held_mutex:
            own = self._held.get(session_id)
        with self._connection(f"cannot delete session {session_id!r}") as connection:
            row = connection.execute(
                "DELETE FROM iac_sessions WHERE id = %(id)s AND NOT EXISTS ("
                " SELECT 1 FROM iac_session_leases WHERE session_id = %(id)s"
                " AND expires_at > now() AND token IS DISTINCT FROM %(token)s)"
                " RETURNING id",
                {"id": session_id, "token": None if own is None else own.token},
            ).fetchone()
            if row is None and self._select_meta(connection, session_id) is not None:
                raise SessionLockedError(session_id)
        if own is not None:
            own.release()  # its lease row went with the session

    # -- leases -------------------------------------------------------------------------

    def lock(self, session_id: str) -> Lease:
        """Take the session's lease now, without waiting (see SessionStore.lock)."""
        if not is_valid_session_id(session_id):
            raise SessionNotFoundError(session_id)
        with self._held_mutex:
            # Reserved while the statement runs: ACQUIRE_SQL takes over rows naming this
            # store, so a second thread of ours must not get as far as the database.
            if session_id in self._held or session_id in self._acquiring:
                raise SessionLockedError(session_id)
            self._acquiring.add(session_id)
        try:
            token = self._acquire(session_id)
            lease = Lease(session_id, token, self._release)
            with self._held_mutex:
                self._held[session_id] = lease
        finally:
            with self._held_mutex:
                self._acquiring.discard(session_id)
        self._renewer.ensure_running()
        return lease

    def _acquire(self, session_id: str) -> int:
        """A new fencing token for the session's lease, or SessionLockedError /
        SessionNotFoundError."""
        action = f"cannot lock session {session_id!r}"
        with self._connection(action) as connection:
            row = connection.execute(
                ACQUIRE_SQL,
                {"id": session_id, "owner": self.owner, "ttl": self.lease_seconds},
            ).fetchone()
            if row is None:
                if self._select_meta(connection, session_id) is None:
                    raise SessionNotFoundError(session_id)
                raise SessionLockedError(session_id)
        return int(row[0])

    def _release(self, lease: Lease) -> None:
        with self._held_mutex:
            if self._held.get(lease.session_id) is lease:
                del self._held[lease.session_id]
            idle = not self._held
        try:
            self._release_row(lease)
        except StoreWriteError as error:
            # It lapses by itself after lease_seconds; nobody else is hurt meanwhile.
            logger.warning("could not release the lease of %r: %s", lease.session_id, error)
        if idle:
            self._renewer.stop()

    def _release_row(self, lease: Lease) -> None:
        with self._connection(f"cannot unlock session {lease.session_id!r}") as connection:
            connection.execute(RELEASE_SQL, (lease.session_id, lease.token))

    def _renew_all(self) -> None:
        with self._held_mutex:
            leases = list(self._held.values())
        if not leases:
            return
        with self._connection("cannot renew session leases") as connection:
            for lease in leases:
                renewed = connection.execute(
                    RENEW_SQL,
                    {"id": lease.session_id, "token": lease.token, "ttl": self.lease_seconds},
                ).rowcount
                if not renewed and not lease.released:
                    logger.warning(
                        "lost the lease of session %r: another process took it over",
                        lease.session_id,
                    )


def _taken_over(action: str) -> SessionTakenOverError:
    """This process's lease was taken over: its writes are refused from now on (fencing)."""
    return SessionTakenOverError(
        f"{action}: another process took the session over (its lease expired)",
        errno=errno_codes.EBUSY,
    )


def _encode(event: dict[str, Any]) -> str:
    """The event as JSON text, with the JSONL store's rules (dict only, no NaN)."""
    return encode_line(event)[:-1].decode("utf-8")


__all__ = ["PostgresSessionStore"]
