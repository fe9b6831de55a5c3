"""``SessionStore``: create, append to, load, list, fork, delete and lock sessions.

All methods are synchronous and short (a few system calls for an append), so the async
agent layer may call them directly; only ``load_events``/``fork`` of a large session and the
first ``list`` in a process read megabytes.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import secrets
import shutil
import threading
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final, NamedTuple

from iac_code.session_files import sync_paths

from . import fsio
from .cursor import decode_cursor, encode_cursor, owner_scope
from .errors import (
    InvalidSessionIdError,
    SessionExistsError,
    SessionLockedError,
    SessionNotFoundError,
    StoreWriteError,
)
from .ids import is_valid_session_id
from .index import SessionIndex
from .jsonl import encode_line, parse_lines, parse_stream
from .locking import LOCK_TABLE_FILE, LockTable, SessionLock
from .meta import SessionMeta, normalize_timestamp, utc_now

logger = logging.getLogger(__name__)

SESSIONS_DIR = "sessions"
EVENTS_FILE = "events.jsonl"
META_FILE = "meta.json"
LOCK_FILE = "lock"
DEFAULT_PAGE_SIZE = 50
_TRASH_PREFIX = ".trash-"


class _UnreadableMeta(Exception):
    """A session folder's meta.json exists but cannot be read or does not match the folder."""


class _Unset:
    """Marker for "argument not given", distinct from an explicit None."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


class ListingFilter(NamedTuple):
    """How one ``list`` call of a store is scoped by its ``owner`` and ``cursor`` arguments."""

    by_owner: bool
    """Only one owner's sessions are listed."""
    owner: str | None
    """That owner (None: the sessions without one)."""
    scope: bytes
    """The cursor checksum scope of this listing (see :func:`.cursor.owner_scope`)."""
    after: tuple[str, str] | None
    """The ``(updatedAt, sessionId)`` the page starts after (None: from the top)."""


def listing_filter(owner: str | _Unset | None, cursor: str | None) -> ListingFilter:
    """The filter of a ``list`` call (shared by the stores, so their cursors agree); a
    cursor made for another listing raises InvalidCursorError."""
    by_owner = not isinstance(owner, _Unset)
    wanted = None if isinstance(owner, _Unset) else owner
    scope = owner_scope(wanted) if by_owner else b""
    after = None if cursor is None else decode_cursor(cursor, scope=scope)
    return ListingFilter(by_owner, wanted, scope, after)


class SessionStore:
    """Sessions persisted under ``home / "sessions"``.

    Layout::

        sessions/
          index.jsonl          listing index (see iac_code.store.index)
          index.lock           writers of the index flock this file
          session.locks        one byte-range lock per active session (iac_code.store.locking)
          <session id>/
            meta.json          SessionMeta.to_json(), replaced atomically
            events.jsonl       append-only event log, one JSON object per line
            lock               fallback lock when session.locks cannot be written

    ``durable=True`` adds fsync to every append and metadata write (survives power loss,
    costs milliseconds per write); without it a process crash (``kill -9``) still loses at
    most the event being written.
    """

    def __init__(self, home: Path, *, durable: bool = False) -> None:
        self.home = Path(home)
        self.sessions_dir = self.home / SESSIONS_DIR
        self.durable = durable
        self._index = SessionIndex(self.sessions_dir, scan_sessions=self._scan_meta_records)
        self._held_locks: dict[str, SessionLock] = {}
        self._lock_table = LockTable(self.sessions_dir / LOCK_TABLE_FILE)
        self._held_mutex = threading.Lock()

    # -- paths --------------------------------------------------------------------------

    def _session_dir(self, session_id: str) -> Path | None:
        """The session's directory, or None when the id is not a safe name."""
        if not is_valid_session_id(session_id):
            return None
        return self.sessions_dir / session_id

    def _existing_dir(self, session_id: str) -> Path:
        directory = self._session_dir(session_id)
        if directory is None:
            raise SessionNotFoundError(session_id)
        return directory

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
        meta = SessionMeta.new(
            session_id,
            cwd,
            additional_directories=additional_directories,
            title=title,
            parent_id=parent_id,
            owner=owner,
        )
        self._materialize(meta, b"")
        return meta

    def fork(self, source_id: str, new_id: str, *, cwd: str | None = None) -> SessionMeta:
        """Create ``new_id`` holding a copy of every event of ``source_id``.

        The copy gets ``parentId = source_id``, the source's title and directories, and
        ``cwd`` (the source's unless given). The source is only read.
        """
        source = self.get_meta(source_id)
        if source is None:
            raise SessionNotFoundError(source_id)
        events = self._read_events_bytes(source_id)
        events = events[: events.rfind(b"\n") + 1]  # never copy a torn last line
        meta = source.forked(new_id, cwd)
        self._materialize(meta, events)
        return meta

    def _materialize(self, meta: SessionMeta, events: bytes) -> None:
        """Write a new session directory; meta.json is written last and marks it complete."""
        directory = self._session_dir(meta.session_id)
        if directory is None:
            raise InvalidSessionIdError(meta.session_id)
        try:
            if not self.sessions_dir.is_dir():
                fsio.ensure_private_dirs(self.sessions_dir)
                fsio.sync_directory(self.sessions_dir.parent)  # the first session's folder
        except OSError as error:
            raise _write_error(f"cannot create {self.sessions_dir}", error) from error
        try:
            fsio.make_private_dir(directory)
        except FileExistsError:
            raise SessionExistsError(meta.session_id) from None
        except OSError as error:
            raise _write_error(f"cannot create session {meta.session_id!r}", error) from error
        try:
            fsio.create_private_file(directory / EVENTS_FILE, events)
            fsio.create_private_file(directory / LOCK_FILE)
            fsio.replace_file(directory / META_FILE, encode_line(meta.to_json()), durable=False)
            self._index.put(meta.to_index_record())
            # What a later session/load reads is fsync-ed whatever ``durable`` says, as the
            # start-up fast path does: session/new or fork is answered right after, and an
            # answered session must survive a power cut too. The index record is only
            # written (it survives a crash, not a power cut).
            loaded = [directory / META_FILE, directory, self.sessions_dir]
            if events:
                loaded.append(directory / EVENTS_FILE)  # a fork's copied events
            sync_paths([str(path) for path in loaded])
        except OSError as error:
            shutil.rmtree(directory, ignore_errors=True)
            raise _write_error(f"cannot create session {meta.session_id!r}", error) from error

    # -- metadata -----------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        """True when the session exists (an invalid id never exists)."""
        return self.get_meta(session_id) is not None

    def get_meta(self, session_id: str) -> SessionMeta | None:
        """The session's metadata, or None when there is no such session."""
        try:
            return self._read_meta_file(session_id)
        except _UnreadableMeta:
            return self._meta_from_index(session_id)

    def _read_meta_file(self, session_id: str) -> SessionMeta | None:
        """The session's own ``meta.json``: None when absent, _UnreadableMeta when bad.

        Never consults the index, so the index may call it while rebuilding itself.
        """
        directory = self._session_dir(session_id)
        if directory is None:
            return None
        try:
            data = fsio.read_file(directory / META_FILE)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as error:
            logger.warning("cannot read metadata of session %r: %s", session_id, error)
            raise _UnreadableMeta from error
        try:
            records = parse_lines(data if data.endswith(b"\n") else data + b"\n").records
            meta = SessionMeta.from_json(records[0] if len(records) == 1 else None)
            if meta.session_id != session_id:
                # A folder copied or renamed by hand: its meta.json names another session.
                raise ValueError(f"meta.json names session {meta.session_id!r}")
        except ValueError as error:
            logger.warning("corrupt metadata of session %r: %s", session_id, error)
            raise _UnreadableMeta from error
        return meta

    def _meta_from_index(self, session_id: str) -> SessionMeta | None:
        record = self._index.get(session_id)
        if record is None:
            return None
        try:
            return SessionMeta.from_json(record)
        except ValueError:
            return None

    def update_meta(
        self,
        session_id: str,
        *,
        title: str | _Unset | None = UNSET,
        updated_at: datetime | str | None = None,
        additional_directories: Sequence[str] | _Unset = UNSET,
    ) -> SessionMeta:
        """Change metadata and return the new value.

        ``title=None`` clears the title; leaving an argument out keeps it. ``updated_at``
        defaults to now (so ``update_meta(id)`` marks the session as just used) and accepts
        a datetime or an ISO 8601 string. meta.json is replaced atomically and the index is
        updated; on failure StoreWriteError is raised and the old metadata stays.
        """
        directory = self._existing_dir(session_id)
        current = self.get_meta(session_id)
        if current is None:
            raise SessionNotFoundError(session_id)
        changes: dict[str, Any] = {
            "updated_at": utc_now() if updated_at is None else normalize_timestamp(updated_at)
        }
        if not isinstance(title, _Unset):
            changes["title"] = title
        if not isinstance(additional_directories, _Unset):
            changes["additional_directories"] = tuple(additional_directories)
        meta = dataclasses.replace(current, **changes)
        try:
            fsio.replace_file(
                directory / META_FILE, encode_line(meta.to_json()), durable=self.durable
            )
        except FileNotFoundError:
            raise SessionNotFoundError(session_id) from None
        except OSError as error:
            raise _write_error(f"cannot update session {session_id!r}", error) from error
        try:
            self._index.put(meta.to_index_record())
        except OSError as error:
            message = f"cannot update the session index for {session_id!r}"
            raise _write_error(message, error) from error
        return meta

    # -- events -------------------------------------------------------------------------

    def append(self, session_id: str, event: dict[str, Any]) -> None:
        """Append one event as one line, written with a single ``write`` call.

        Raises SessionNotFoundError for an unknown session, StoreWriteError when the disk
        refuses the write (nothing already stored is damaged), and TypeError/ValueError when
        ``event`` is not a JSON-serialisable dict.
        """
        self._append_bytes(session_id, encode_line(event))

    def append_many(self, session_id: str, events: Iterable[dict[str, Any]]) -> None:
        """Append several events in one ``write``; on failure none of them is kept."""
        data = b"".join(encode_line(event) for event in events)
        if data:
            self._append_bytes(session_id, data)

    def _append_bytes(self, session_id: str, data: bytes) -> None:
        path = self._existing_dir(session_id) / EVENTS_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            raise SessionNotFoundError(session_id) from None
        except OSError as error:
            raise _write_error(f"cannot append to session {session_id!r}", error) from error
        try:
            fsio.append_lines(fd, data, durable=self.durable)
        except OSError as error:
            raise _write_error(f"cannot append to session {session_id!r}", error) from error
        finally:
            os.close(fd)

    def load_events(self, session_id: str) -> list[dict[str, Any]]:
        """Every event of the session, in order.

        A torn last line (crash while writing) is left out and cut off the file, so that
        later appends start on a clean line; corrupt lines elsewhere are skipped and logged.
        The file is streamed in chunks (`jsonl.parse_stream`): memory is the events, not
        three copies of the file, and a huge torn tail is skipped unbuffered. It reads the
        whole log: call it off the event loop.
        """
        path = self._existing_dir(session_id) / EVENTS_FILE
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            if self.get_meta(session_id) is None:
                raise SessionNotFoundError(session_id) from None
            return []  # a session whose log was never written has no events
        try:
            parsed = parse_stream(lambda size: os.read(fd, size))
        finally:
            os.close(fd)
        if parsed.bad_lines:
            logger.warning(
                "session %r: skipped %d corrupt event line(s) (lines %s)",
                session_id,
                len(parsed.bad_lines),
                ", ".join(map(str, parsed.bad_lines[:10])),
            )
        if parsed.complete_length < parsed.total_length:
            self._repair_torn_tail(session_id, path, parsed.total_length, parsed.complete_length)
        return parsed.records

    def _read_events_bytes(self, session_id: str) -> bytes:
        directory = self._existing_dir(session_id)
        try:
            return fsio.read_file(directory / EVENTS_FILE)
        except (FileNotFoundError, NotADirectoryError):
            if self.get_meta(session_id) is None:
                raise SessionNotFoundError(session_id) from None
            return b""  # a session whose log was never written has no events

    def _repair_torn_tail(self, session_id: str, path: Path, seen: int, keep: int) -> None:
        """Truncate the fragment after the last newline, but only as the session's writer.

        Without the lock another process might be in the middle of an append, and its
        unfinished line would look torn; the repair is then left to that process.
        """
        with self._held_mutex:
            own_lock = self._held_locks.get(session_id)
        temporary: SessionLock | None = None
        if own_lock is None:
            temporary = SessionLock(
                session_id, path.parent / LOCK_FILE, lambda _: None, self._lock_table
            )
            try:
                temporary.acquire()
            except (SessionLockedError, SessionNotFoundError, StoreWriteError):
                logger.info("session %r: torn last line left to its writer", session_id)
                return
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
            try:
                if os.fstat(fd).st_size == seen:
                    os.ftruncate(fd, keep)
                    logger.warning(
                        "session %r: removed a torn last line (%d bytes)", session_id, seen - keep
                    )
            finally:
                os.close(fd)
        except OSError as error:
            logger.warning("session %r: cannot repair its torn last line: %s", session_id, error)
        finally:
            if temporary is not None:
                temporary.release()

    # -- listing ------------------------------------------------------------------------

    def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        owner: str | _Unset | None = UNSET,
    ) -> tuple[list[SessionMeta], str | None]:
        """One page of sessions, most recently updated first (ties: larger id first).

        ``cwd`` keeps only sessions whose stored cwd is exactly that string; ``owner`` only
        that principal's sessions (None: those without an owner), walked in the index's
        per-owner ordering, and the cursor is then good for that owner's listing only. The
        returned cursor is None on the last page. A cursor not made by this store (or for
        another owner) raises InvalidCursorError.
        """
        if limit < 1:
            raise ValueError("limit must be at least 1")
        listing = listing_filter(owner, cursor)
        records, more = self._index.page(
            cwd=cwd,
            after=listing.after,
            limit=limit,
            by_owner=listing.by_owner,
            owner=listing.owner,
        )
        page: list[SessionMeta] = []
        for record in records:
            try:
                if not is_valid_session_id(record.get("id")):
                    raise ValueError("invalid session id")
                page.append(SessionMeta.from_json(record))
            except ValueError:
                logger.warning("skipping a malformed index record for %r", record.get("id"))
        next_cursor = None
        if more and records:
            last = records[-1]
            next_cursor = encode_cursor(last["updatedAt"], last["id"], scope=listing.scope)
        return page, next_cursor

    def rebuild_index(self) -> None:
        """Recreate the listing index from every session's meta.json (maintenance tool)."""
        try:
            self._index.rebuild()
        except OSError as error:
            raise _write_error("cannot rebuild the session index", error) from error

    def _scan_meta_records(self) -> Iterator[dict[str, Any]]:
        try:
            names = [entry.name for entry in os.scandir(self.sessions_dir) if entry.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            return
        for name in names:
            if not is_valid_session_id(name):
                continue  # trash of an interrupted delete, or not ours
            try:
                meta = self._read_meta_file(name)
            except _UnreadableMeta:
                logger.warning("session folder %r left out of the index", name)
                continue
            if meta is not None:
                yield meta.to_index_record()

    # -- deletion -----------------------------------------------------------------------

    def delete(self, session_id: str) -> None:
        """Remove the session from disk and from the listing; unknown ids are ignored.

        Raises SessionLockedError when another process or store has the session locked
        (a lock held through *this* store is fine: the agent deletes what it closes).
        """
        directory = self._session_dir(session_id)
        if directory is None:
            return
        if not directory.exists():
            if self._index.get(session_id) is not None:
                self._remove_from_index(session_id)  # left behind by an interrupted delete
            return
        with self._held_mutex:
            own_lock = self._held_locks.get(session_id)
        temporary: SessionLock | None = None
        if own_lock is None:
            temporary = SessionLock(
                session_id, directory / LOCK_FILE, lambda _: None, self._lock_table
            )
            try:
                temporary.acquire()
            except SessionNotFoundError:
                temporary = None  # gone meanwhile, or an incomplete directory without a lock
        try:
            # Renaming first makes the removal atomic for readers: the session vanishes at
            # once even though removing its files takes a while.
            trash = self.sessions_dir / f"{_TRASH_PREFIX}{session_id}-{secrets.token_hex(4)}"
            try:
                os.rename(directory, trash)
                renamed = True
            except FileNotFoundError:
                renamed = False
            except OSError as error:
                raise _write_error(f"cannot delete session {session_id!r}", error) from error
            try:
                self._remove_from_index(session_id)
            finally:
                if renamed:
                    shutil.rmtree(trash, ignore_errors=True)
        finally:
            if temporary is not None:
                temporary.release()
        if own_lock is not None:
            own_lock.release()  # only once the session is really gone

    def _remove_from_index(self, session_id: str) -> None:
        try:
            self._index.remove(session_id)
        except OSError as error:
            raise _write_error(f"cannot remove {session_id!r} from the index", error) from error

    # -- locking ------------------------------------------------------------------------

    def lock(self, session_id: str) -> SessionLock:
        """Take the session's exclusive lock now, without waiting.

        Use as ``with store.lock(id): ...`` or keep the returned lock while the session is
        active and call ``release()``. Raises SessionLockedError when another process or
        another SessionStore (or this one, already) holds it, SessionNotFoundError for an
        unknown session.
        """
        directory = self._existing_dir(session_id)
        if not (directory / META_FILE).exists():
            raise SessionNotFoundError(session_id)
        with self._held_mutex:
            if session_id in self._held_locks:
                raise SessionLockedError(session_id)
            lock = SessionLock(
                session_id, directory / LOCK_FILE, self._forget_lock, self._lock_table
            )
            lock.acquire()
            self._held_locks[session_id] = lock
        return lock

    def _forget_lock(self, lock: SessionLock) -> None:
        with self._held_mutex:
            if self._held_locks.get(lock.session_id) is lock:
                del self._held_locks[lock.session_id]


def _write_error(message: str, error: OSError) -> StoreWriteError:
    reason = error.strerror or str(error)
    return StoreWriteError(f"{message}: {reason}", errno=error.errno)
