"""Write a new, empty session in the session store's layout, durably (standard library only).

The start-up fast path (:mod:`iac_code.prelude`) answers ``session/new`` before the full
runtime is imported, and importing :mod:`iac_code.store` costs about 30 ms of that time. Yet
an answered session must survive a full disk (the error goes out instead of the answer) and
a ``kill -9`` right after the answer (a later ``session/load`` and ``session/list`` find it).
So the fast path creates the session here, with the very files and index record
:meth:`iac_code.store.SessionStore.create` writes, and fsyncs what a later load reads
(``meta.json`` and the two folders' entries) before it answers, as the store does. Tests
read what this writes back through the store.

Every failure is a plain ``OSError`` after the half-made session folder is removed; the
fast path then leaves the request to the runtime, whose store gives the error it always
gives (same code, same message).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import threading
import time

TYPE_CHECKING = False  # typing is not imported on the start-up path (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Sequence

# The store's names (iac_code.store.session_store and .index); a test keeps them equal.
SESSIONS_DIR = "sessions"
EVENTS_FILE = "events.jsonl"
META_FILE = "meta.json"
LOCK_FILE = "lock"
INDEX_FILE = "index.jsonl"
INDEX_LOCK_FILE = "index.lock"
META_SCHEMA_VERSION = 1

_DIR_MODE = 0o700
_FILE_MODE = 0o600
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def utc_timestamp() -> str:
    """Now in the store's fixed-width form ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (no datetime)."""
    nanoseconds = time.time_ns()
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest // 1000:06d}Z"


def create_session(sessions: str, session_id: str, cwd: str) -> None:
    """Create session ``session_id`` (no events) in the store folder ``sessions`` (the
    home's ``sessions``); on return its folder, ``meta.json``, empty ``events.jsonl`` and
    index record are written, and what a load reads is fsync-ed."""
    _ensure_dirs(sessions)
    directory = os.path.join(sessions, session_id)
    os.mkdir(directory, _DIR_MODE)
    try:
        os.chmod(directory, _DIR_MODE)  # whatever the umask, like the store
        now = utc_timestamp()
        _create_file(os.path.join(directory, EVENTS_FILE))
        _create_file(os.path.join(directory, LOCK_FILE))
        meta = {
            "schemaVersion": META_SCHEMA_VERSION,
            "id": session_id,
            "cwd": cwd,
            "title": None,
            "createdAt": now,
            "updatedAt": now,
            "parentId": None,
            "additionalDirectories": [],
        }
        # meta.json last: its presence marks the folder complete for readers.
        meta_path = os.path.join(directory, META_FILE)
        _replace(meta_path, _line(meta))
        record: dict[str, object] = {
            "id": session_id,
            "cwd": cwd,
            "updatedAt": now,
            "createdAt": now,
        }
        _append_index(sessions, _line(record))
        # What a load reads: meta.json and the entries naming it and its folder.
        sync_paths([meta_path, directory, sessions])
    except BaseException:
        _remove_tree(directory)
        raise


def _line(record: dict[str, object]) -> bytes:
    """One record as the store encodes it (compact, UTF-8; ASCII for a lone surrogate)."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(record, separators=(",", ":")).encode("ascii") + b"\n"


def _ensure_dirs(path: str) -> None:
    """Make ``path`` and missing parents 0700, syncing each parent that gains an entry."""
    if os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    if parent != path:
        _ensure_dirs(parent)
    try:
        os.mkdir(path, _DIR_MODE)
    except FileExistsError:
        if not os.path.isdir(path):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path) from None
        return
    os.chmod(path, _DIR_MODE)
    _fsync_path(parent)


def _open_private(path: str, flags: int) -> int:
    fd = os.open(path, flags | _O_CLOEXEC, _FILE_MODE)
    try:
        if os.fstat(fd).st_mode & 0o777 != _FILE_MODE:
            os.fchmod(fd, _FILE_MODE)
    except OSError:
        pass  # an existing file on a read-only file system: still usable, as in the store
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _create_file(path: str) -> None:
    os.close(_open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))


def sync_paths(paths: Sequence[str]) -> None:
    """fsync every path (files or folders), all at once.

    Each fsync waits for a device flush (3-6 ms on these virtual disks even when nothing is
    dirty); issued together, the journal commits them in one go: about 3x faster than one
    after the other here. Raises the first error once every flush has ended."""
    errors: list[OSError] = []

    def sync(path: str) -> None:
        try:
            _fsync_path(path)
        except OSError as error:
            errors.append(error)

    helpers = [threading.Thread(target=sync, args=(path,)) for path in paths[1:]]
    for helper in helpers:
        helper.start()
    if paths:
        sync(paths[0])
    for helper in helpers:
        helper.join()
    if errors:
        raise errors[0]


def _replace(path: str, data: bytes) -> None:
    """Give ``path`` its content through a temporary file and a rename (synced by the caller:
    the file is new, so no reader can see a mix of old and new)."""
    temporary = os.path.join(
        os.path.dirname(path), f".{os.path.basename(path)}.{os.urandom(6).hex()}.tmp"
    )
    fd = _open_private(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def _fsync_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _append_index(sessions: str, line: bytes) -> None:
    """Append under the index writers' flock, as the store does (compaction is left to the
    store's next write); a torn last line gets its newline first. Written, not fsync-ed,
    like the store's own record of a new session."""
    lock_fd = _open_private(os.path.join(sessions, INDEX_LOCK_FILE), os.O_RDONLY | os.O_CREAT)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        fd = _open_private(os.path.join(sessions, INDEX_FILE), os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
            if end and os.pread(fd, 1, end - 1) != b"\n":
                line = b"\n" + line
            try:
                _write_all(fd, line)
            except OSError:
                os.ftruncate(fd, end)  # never leave half a record behind
                raise
        finally:
            os.close(fd)
    finally:
        os.close(lock_fd)  # releases the flock


def _remove_tree(directory: str) -> None:
    """Remove a half-made session folder (flat: files only); errors are ignored."""
    try:
        for entry in os.scandir(directory):
            try:
                os.unlink(entry.path)
            except OSError:
                pass
        os.rmdir(directory)
    except OSError:
        pass
