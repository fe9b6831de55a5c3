"""The session store interface the agent uses, whatever keeps the sessions.

Two implementations: :class:`iac_code.store.SessionStore` (JSON Lines files under the state
folder, the default) and :class:`iac_code.store.pg_store.PostgresSessionStore` (a shared
PostgreSQL database, for several processes or machines). One contract test suite
(``tests/agent/store/test_store_contract.py``) holds both to the same behaviour.

Every method is synchronous and short, so the async agent may call it directly. Errors are
the classes of :mod:`iac_code.store.errors`: an unknown or unsafe id is
SessionNotFoundError, a session another process holds is SessionLockedError, and anything the
storage refuses (disk full, read-only, database unreachable) is StoreWriteError with what was
already stored left intact.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol

from .meta import SessionMeta
from .session_store import _Unset


class HeldSession(Protocol):
    """A session's exclusive writer lock, held until :meth:`release` (idempotent)."""

    @property
    def session_id(self) -> str: ...

    def release(self) -> None: ...

    def __enter__(self) -> HeldSession: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


class SessionStoreBackend(Protocol):
    """What :class:`iac_code.agent.acp_agent.IacAgent` asks of a session store."""

    def create(
        self,
        session_id: str,
        cwd: str,
        *,
        additional_directories: Sequence[str] = (),
        title: str | None = None,
        parent_id: str | None = None,
        owner: str | None = None,
    ) -> SessionMeta: ...

    def fork(self, source_id: str, new_id: str, *, cwd: str | None = None) -> SessionMeta: ...

    def exists(self, session_id: str) -> bool: ...

    def get_meta(self, session_id: str) -> SessionMeta | None: ...

    def update_meta(
        self,
        session_id: str,
        *,
        title: Any = ...,
        updated_at: datetime | str | None = None,
        additional_directories: Any = ...,
    ) -> SessionMeta: ...

    def append(self, session_id: str, event: dict[str, Any]) -> None: ...

    def append_many(self, session_id: str, events: Iterable[dict[str, Any]]) -> None: ...

    def load_events(self, session_id: str) -> list[dict[str, Any]]: ...

    def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = ...,
        owner: str | _Unset | None = ...,
    ) -> tuple[list[SessionMeta], str | None]:
        """One page, newest first; ``owner`` (when given) filters in the store itself and
        scopes the returned cursor to that owner's listing."""
        ...

    def delete(self, session_id: str) -> None: ...

    def lock(self, session_id: str) -> HeldSession: ...
