"""The listing index: ``sessions/index.jsonl``, an append-only log of metadata records.

Every create/update appends the session's full metadata; a delete appends a tombstone
``{"id": ..., "deleted": true}``. Folding the log by id (last record wins) gives the live
set, so listing never has to open one file per session.

Concurrency between processes:

* Writers append under an exclusive ``flock`` on ``sessions/index.lock`` and open the index
  *after* taking it, so an append can never land in a file that a compaction has just
  replaced.
* Readers take no lock. They remember the file's identity (device, inode), its first line
  and how far they have folded; the next read folds only the new tail, and a different inode
  or first line (a compaction happened) means a full re-read. The first line matters because
  a file system may give the compacted file the inode number the old one just freed; every
  compaction writes a header with a fresh random generation, so its first line is new.
  A half-written final line is simply not consumed yet.
* When the file has grown to twice its size after the last compaction, the writer that
  notices rewrites it (live records only) atomically, still under the lock. The first line
  of a compacted file is a header recording that size.
* A reader that finds the file missing rebuilds it from the sessions' ``meta.json`` files,
  but only if it gets the lock at once; when another holder has it, the reader lists from
  its own scan instead of waiting. flock locks belong to an open file description, so a
  second ``flock`` by this very process would wait for ever: the lock is never taken again
  by a thread that already holds it, and the scan never reads the index.
"""

from __future__ import annotations

import bisect
import fcntl
import logging
import os
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import fsio
from .ids import is_valid_session_id
from .jsonl import encode_line, parse_lines

logger = logging.getLogger(__name__)

INDEX_FILE = "index.jsonl"
INDEX_LOCK_FILE = "index.lock"
_HEADER_KEY = "indexHeader"
#: Growth allowed past the last compacted size before compacting again (plus doubling).
_COMPACT_SLACK_BYTES = 256 * 1024
_HEADER_PROBE_BYTES = 256

Record = dict[str, Any]
#: A position in the listing order: (updatedAt, sessionId), compared as a tuple.
Position = tuple[str, str]


class SessionIndex:
    """Incrementally folded view of ``index.jsonl`` plus the writer side of it."""

    def __init__(
        self,
        directory: Path,
        *,
        scan_sessions: Callable[[], Iterable[Record]],
    ) -> None:
        self._directory = directory
        self._path = directory / INDEX_FILE
        self._lock_path = directory / INDEX_LOCK_FILE
        self._scan_sessions = scan_sessions
        self._mutex = threading.RLock()
        #: Set while this thread holds the index flock (re-taking it would self-deadlock).
        self._holder = threading.local()
        self._entries: dict[str, Record] = {}
        self._ordered: list[Position] | None = []
        #: Each owner's positions in listing order (``owner`` key of the records; None for
        #: sessions without one), built on demand like ``_ordered``.
        self._by_owner: dict[object, list[Position]] | None = None
        self._file_identity: tuple[int, int] | None = None
        #: The first complete line of the file folded so far (b"" until one is read).
        self._first_line = b""
        self._folded_offset = 0
        #: (device, inode, size right after that file was compacted)
        self._compacted_size: tuple[int, int, int] | None = None

    # -- writing ------------------------------------------------------------------------

    def put(self, record: Record) -> None:
        """Record a session's current metadata (``SessionMeta.to_json()`` form)."""
        self._append(encode_line(record))

    def remove(self, session_id: str) -> None:
        """Record that a session was deleted."""
        self._append(encode_line({"id": session_id, "deleted": True}))

    def _append(self, line: bytes) -> None:
        with self._exclusive():
            fd = fsio.open_private(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                fsio.append_lines(fd, line, durable=False)
                needs_compaction = self._grown_too_much(fd)
            finally:
                os.close(fd)
            if needs_compaction:
                try:
                    self._compact_locked()
                except OSError as error:
                    # The append itself succeeded; a compaction can wait for a later write.
                    logger.warning("could not compact %s: %s", self._path, error)

    @contextmanager
    def _exclusive(self, *, wait: bool = True) -> Iterator[None]:
        """Hold the index flock; with ``wait=False`` raise BlockingIOError when it is busy."""
        if getattr(self._holder, "held", False):
            raise RuntimeError("the session index lock is already held by this thread")
        fd = fsio.open_private(self._lock_path, os.O_RDONLY | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._holder.held = True
            try:
                yield
            finally:
                self._holder.held = False
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    def _grown_too_much(self, fd: int) -> bool:
        status = os.fstat(fd)
        cached = self._compacted_size
        if cached is not None and cached[:2] == (status.st_dev, status.st_ino):
            baseline = cached[2]
        else:
            baseline = self._read_header_size(fd)
            self._compacted_size = (status.st_dev, status.st_ino, baseline)
        return status.st_size > max(2 * baseline, baseline + _COMPACT_SLACK_BYTES)

    @staticmethod
    def _read_header_size(fd: int) -> int:
        head = os.pread(fd, _HEADER_PROBE_BYTES, 0)
        first = parse_lines(head[: head.find(b"\n") + 1]).records
        if first and isinstance(first[0].get(_HEADER_KEY), dict):
            size = first[0][_HEADER_KEY].get("compactedBytes")
            if isinstance(size, int) and size >= 0:
                return size
        return 0

    def compact(self) -> None:
        """Rewrite the index with live records only (normally done automatically)."""
        with self._exclusive():
            self._compact_locked()

    def _compact_locked(self) -> None:
        try:
            data = fsio.read_file(self._path)
        except FileNotFoundError:
            data = b""
        entries: dict[str, Record] = {}
        _fold(parse_lines(data).records, entries)
        self._write_compacted_locked(entries.values())

    def rebuild(self, *, wait: bool = True) -> None:
        """Recreate the index from the sessions' own ``meta.json`` files.

        With ``wait=False`` a busy lock raises BlockingIOError instead of waiting.
        """
        with self._exclusive(wait=wait):
            self._write_compacted_locked(list(self._scan_sessions()))

    def _write_compacted_locked(self, records: Iterable[Record]) -> None:
        body = b"".join(encode_line(record) for record in records)
        header = encode_line(
            {
                _HEADER_KEY: {
                    "version": 1,
                    "compactedBytes": len(body),
                    # Tells readers this is a new file even when its inode number is reused.
                    "generation": secrets.token_hex(8),
                }
            }
        )
        fsio.replace_file(self._path, header + body, durable=True)
        status = os.stat(self._path)
        self._compacted_size = (status.st_dev, status.st_ino, len(body))

    # -- reading ------------------------------------------------------------------------

    def get(self, session_id: str) -> Record | None:
        """The latest metadata record of a live session, or None."""
        with self._mutex:
            self._refresh()
            return self._entries.get(session_id)

    def page(
        self,
        *,
        cwd: str | None,
        after: Position | None,
        limit: int,
        by_owner: bool = False,
        owner: str | None = None,
    ) -> tuple[list[Record], bool]:
        """Up to ``limit`` records older than ``after`` (newest first) and whether more remain.

        With ``by_owner`` only ``owner``'s sessions (None: those without an owner) are
        walked: each owner has its own ordering, so one principal's page never steps over
        the sessions of all the others.
        """
        with self._mutex:
            self._refresh()
            ordered = self._owner_ordering(owner) if by_owner else self._ordering()
            end = len(ordered) if after is None else bisect.bisect_left(ordered, after)
            entries = self._entries
            found: list[Record] = []
            for position in range(end - 1, -1, -1):
                record = entries[ordered[position][1]]
                if cwd is not None and record["cwd"] != cwd:
                    continue
                if len(found) == limit:
                    return found, True
                found.append(record)
            return found, False

    def _ordering(self) -> list[Position]:
        if self._ordered is None:
            self._ordered = sorted((r["updatedAt"], sid) for sid, r in self._entries.items())
        return self._ordered

    def _owner_ordering(self, owner: str | None) -> list[Position]:
        if self._by_owner is None:
            # Every owner's ordering in one pass: the next principal to list finds its own.
            groups: dict[object, list[Position]] = {}
            for session_id, record in self._entries.items():
                position = (record["updatedAt"], session_id)
                groups.setdefault(record.get("owner"), []).append(position)
            for positions in groups.values():
                positions.sort()
            self._by_owner = groups
        return self._by_owner.get(owner, [])

    def _refresh(self, *, may_rebuild: bool = True) -> None:
        try:
            fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):  # no index, or no sessions folder
            self._reset(None)
            if not may_rebuild or not self._any_session_on_disk():
                return
            if getattr(self._holder, "held", False):
                # Called back from inside a rebuild or an append: never re-take the lock.
                self._fold_in(list(self._scan_sessions()))
                return
            logger.warning("%s is missing; rebuilding it from the sessions", self._path)
            try:
                self.rebuild(wait=False)
            except BlockingIOError:
                # Another process is writing the index: list from our own scan meanwhile.
                self._fold_in(list(self._scan_sessions()))
                return
            except OSError as error:
                # Read-only directory: list from the scan without writing an index.
                logger.warning("could not rebuild %s: %s", self._path, error)
                self._fold_in(list(self._scan_sessions()))
                return
            self._refresh(may_rebuild=False)
            return
        try:
            status = os.fstat(fd)
            identity = (status.st_dev, status.st_ino)
            if (
                identity != self._file_identity
                or status.st_size < self._folded_offset
                or (self._first_line and os.pread(fd, len(self._first_line), 0) != self._first_line)
            ):
                self._reset(identity)
            if status.st_size == self._folded_offset:
                return
            tail = fsio.read_from(fd, self._folded_offset)
        finally:
            os.close(fd)
        if self._folded_offset == 0:
            end = tail.find(b"\n")
            self._first_line = tail[: end + 1] if end >= 0 else b""
        parsed = parse_lines(tail)
        if parsed.bad_lines:
            logger.warning("%s: skipped %d corrupt line(s)", self._path, len(parsed.bad_lines))
        self._folded_offset += parsed.complete_length
        self._fold_in(parsed.records)

    def _fold_in(self, records: list[Record]) -> None:
        if records:
            _fold(records, self._entries)
            self._ordered = None
            self._by_owner = None

    def _reset(self, identity: tuple[int, int] | None) -> None:
        self._entries = {}
        self._ordered = None
        self._by_owner = None
        self._file_identity = identity
        self._first_line = b""
        self._folded_offset = 0

    def _any_session_on_disk(self) -> bool:
        try:
            with os.scandir(self._directory) as listing:
                return any(e.is_dir() and is_valid_session_id(e.name) for e in listing)
        except (FileNotFoundError, NotADirectoryError):
            return False


def _fold(records: Iterable[Record], entries: dict[str, Record]) -> None:
    """Apply index records in order: a metadata record replaces, a tombstone removes.

    Only the fields the ordering and the cwd filter need are checked here (this runs for
    every record of the file); ids and the rest are validated for the records on a page.
    """
    for record in records:
        session_id = record.get("id")
        if type(session_id) is not str:
            continue  # the header, or a record that is not ours
        if record.get("deleted") is True:
            entries.pop(session_id, None)
        elif type(record.get("updatedAt")) is str and type(record.get("cwd")) is str:
            entries[session_id] = record
