"""Writer leases of the PostgreSQL store: one writer per session across processes.

A lease row names its owner (this process), a fencing token drawn from a database sequence
(so every new lease has a larger token than any before it) and an expiry. The owner renews
its leases from a background thread while the sessions are open; another process may take a
session over only once its lease has expired. Every append of the holder names the token in
the same statement (see ``PostgresSessionStore``), so a process that lost its lease while
paused, partitioned or slow can never write to the session again.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Final

logger = logging.getLogger(__name__)

#: Seconds a lease lasts without renewal: how long a dead owner keeps others out.
DEFAULT_LEASE_SECONDS: Final = 15.0

# A row naming this very store as owner while it holds no such lease is one whose release
# failed (the database was unreachable then): it is taken again at once instead of keeping
# the session "in use" by its own process until the row expires. Owner names are unique
# per store instance, and the store checks its held and pending leases first.
ACQUIRE_SQL: Final = """
INSERT INTO iac_session_leases (session_id, owner, token, expires_at)
SELECT id, %(owner)s, nextval('iac_fencing_tokens'), now() + make_interval(secs => %(ttl)s)
FROM iac_sessions WHERE id = %(id)s
ON CONFLICT (session_id) DO UPDATE
    SET owner = EXCLUDED.owner, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
    WHERE iac_session_leases.expires_at < now() OR iac_session_leases.owner = EXCLUDED.owner
RETURNING token
"""
RENEW_SQL: Final = """
UPDATE iac_session_leases SET expires_at = now() + make_interval(secs => %(ttl)s)
WHERE session_id = %(id)s AND token = %(token)s
"""

RELEASE_SQL: Final = "DELETE FROM iac_session_leases WHERE session_id = %s AND token = %s"


def new_owner_name() -> str:
    """Who holds a lease, for people reading the table: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class Lease:
    """A held lease; :meth:`release` (or leaving a ``with`` block) gives the session up."""

    def __init__(self, session_id: str, token: int, on_release: Callable[[Lease], None]) -> None:
        self._session_id = session_id
        self.token = token
        self._on_release: Callable[[Lease], None] | None = on_release

    @property
    def session_id(self) -> str:
        return self._session_id

    def release(self) -> None:
        """Give the lease up; calling it again is harmless."""
        on_release, self._on_release = self._on_release, None
        if on_release is not None:
            on_release(self)

    @property
    def released(self) -> bool:
        return self._on_release is None

    def __enter__(self) -> Lease:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


class LeaseRenewer:
    """A daemon thread calling ``renew`` every third of the lease time until stopped.

    Renewing at a third leaves two more chances before the lease lapses when the database is
    briefly slow or unreachable.
    """

    def __init__(self, interval: float, renew: Callable[[], None]) -> None:
        self._interval = interval
        self._renew = renew
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._mutex = threading.Lock()

    def ensure_running(self) -> None:
        with self._mutex:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(
                    target=self._run, name="iac-code-lease-renewer", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._mutex:
            thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._renew()
            except Exception:  # the next round tries again; appends are fenced anyway
                logger.warning("could not renew session leases", exc_info=True)
