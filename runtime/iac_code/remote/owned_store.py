"""One principal's view of the session store (``--auth tokens|jwt``, ``--workspace-root``).

Wraps the real store (JSONL or PostgreSQL) for the agent of one connection:

- sessions it creates carry the principal as ``owner`` in their metadata (a fork keeps it);
- another principal's session looks exactly like one that does not exist: ``get_meta`` is
  None, ``list`` leaves it out (the store filters by owner), and
  ``fork``/``load_events``/``delete``/``lock`` raise :class:`SessionNotFoundError`, so the
  agent answers with its usual "Unknown session." (the same code, message and work as
  for an id nobody ever created);
- with a workspace root, every directory a session is created with must lie inside
  ``ROOT/<principal>`` (symbolic links resolved), else a -32602 error.

Appends and metadata updates pass straight through: the agent only writes to sessions it
opened, and opening went through the checks above.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from acp_bindings.errors import InvalidParamsError

from iac_code.store import DEFAULT_PAGE_SIZE, UNSET, SessionNotFoundError
from iac_code.store.backend import HeldSession, SessionStoreBackend
from iac_code.store.meta import SessionMeta

__all__ = ["SINGLE_USER_FOLDER", "OwnedStore"]

#: The folder under ``--workspace-root`` of a server without named principals.
SINGLE_USER_FOLDER = "default"


class OwnedStore:
    def __init__(
        self, inner: SessionStoreBackend, principal: str | None, workspace_root: Path | None
    ) -> None:
        self._inner = inner
        self.principal = principal
        self._workspace = (
            None
            if workspace_root is None
            else workspace_root.resolve() / (principal or SINGLE_USER_FOLDER)
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)  # close(), and whatever else a backend offers

    # ------------------------------------------------------------------ ownership

    def _mine(self, meta: SessionMeta | None) -> SessionMeta | None:
        return meta if meta is not None and meta.owner == self.principal else None

    def _check_owned(self, session_id: str) -> None:
        if self._mine(self._inner.get_meta(session_id)) is None:
            raise SessionNotFoundError(session_id)

    def _check_inside(self, field: str, directory: str) -> None:
        if self._workspace is None:
            return
        resolved = Path(directory).resolve()
        if resolved != self._workspace and self._workspace not in resolved.parents:
            raise InvalidParamsError(
                "The directory is outside your workspace.",
                data={field: f"must be inside {self._workspace}"},
            )

    # ------------------------------------------------------------------ the backend

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
        del owner  # always this view's principal
        self._check_inside("cwd", cwd)
        for index, directory in enumerate(additional_directories):
            self._check_inside(f"additionalDirectories[{index}]", directory)
        return self._inner.create(
            session_id,
            cwd,
            additional_directories=additional_directories,
            title=title,
            parent_id=parent_id,
            owner=self.principal,
        )

    def fork(self, source_id: str, new_id: str, *, cwd: str | None = None) -> SessionMeta:
        source = self._mine(self._inner.get_meta(source_id))
        if source is None:
            raise SessionNotFoundError(source_id)
        self._check_inside("cwd", cwd if cwd is not None else source.cwd)
        return self._inner.fork(source_id, new_id, cwd=cwd)

    def exists(self, session_id: str) -> bool:
        return self.get_meta(session_id) is not None

    def get_meta(self, session_id: str) -> SessionMeta | None:
        return self._mine(self._inner.get_meta(session_id))

    def update_meta(
        self,
        session_id: str,
        *,
        title: Any = UNSET,
        updated_at: datetime | str | None = None,
        additional_directories: Any = UNSET,
    ) -> SessionMeta:
        if isinstance(additional_directories, list | tuple):
            for index, directory in enumerate(additional_directories):
                self._check_inside(f"additionalDirectories[{index}]", str(directory))
        return self._inner.update_meta(
            session_id,
            title=title,
            updated_at=updated_at,
            additional_directories=additional_directories,
        )

    def append(self, session_id: str, event: dict[str, Any]) -> None:
        self._inner.append(session_id, event)

    def append_many(self, session_id: str, events: Iterable[dict[str, Any]]) -> None:
        self._inner.append_many(session_id, events)

    def load_events(self, session_id: str) -> list[dict[str, Any]]:
        self._check_owned(session_id)
        return self._inner.load_events(session_id)

    def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        owner: Any = UNSET,
    ) -> tuple[list[SessionMeta], str | None]:
        """The principal's sessions, newest first, filtered by the store itself (an index on
        the owner), so a page costs the same however many sessions others have; the cursor
        is good for this principal's listing only (another's is an invalid cursor)."""
        del owner  # always this view's principal
        return self._inner.list(cwd=cwd, cursor=cursor, limit=limit, owner=self.principal)

    def delete(self, session_id: str) -> None:
        self._check_owned(session_id)
        self._inner.delete(session_id)

    def lock(self, session_id: str) -> HeldSession:
        self._check_owned(session_id)
        return self._inner.lock(session_id)
