"""Exceptions raised by the session store.

Every failure has its own class so the agent layer can map it to one wire error without
parsing messages: unknown ids become -32602, a held lock means "session is active elsewhere",
and a :class:`StoreWriteError` is reported to the user while the turn carries on.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error raised by :mod:`iac_code.store`."""


class SessionNotFoundError(StoreError):
    """The session does not exist (or its id is not a valid session id)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session not found: {session_id!r}")
        self.session_id = session_id


class SessionExistsError(StoreError):
    """A session with this id already exists; ids are never reused."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session already exists: {session_id!r}")
        self.session_id = session_id


class InvalidSessionIdError(StoreError, ValueError):
    """A caller asked to *create* a session under an id that is not a safe path name."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"invalid session id: {session_id!r}")
        self.session_id = session_id


class InvalidCursorError(StoreError, ValueError):
    """A ``session/list`` cursor is malformed, truncated or was edited."""


class SessionLockedError(StoreError):
    """Another process (or another store instance) holds the session's lock."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session is in use by another process: {session_id!r}")
        self.session_id = session_id


class StoreWriteError(StoreError):
    """Writing failed (disk full, read-only file system, permission denied, ...).

    Whatever was on disk before the failed call is left intact; ``errno`` carries the
    operating-system error number when there is one.
    """

    def __init__(self, message: str, *, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


class SessionTakenOverError(StoreWriteError):
    """This process held the session's lease, lost it (paused, partitioned, slow) and another
    process has taken the session over: the write was refused by the fencing token, and every
    later write of this process to the session will be too."""


class StoreUnreachableError(StoreWriteError):
    """The database did not answer (down, restarting, the connection broke): nothing of the
    call was stored, and the next call may well succeed once the database is back."""
