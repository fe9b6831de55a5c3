"""Exclusive per-session locks shared by every process using the same sessions directory.

A session's lock is an open-file-description ("OFD") write lock on one byte of the shared
file ``sessions/session.locks``, at an offset derived from the session id. One descriptor
per store serves every session, so an idle open session holds no descriptor of its own (an
editor with hundreds of tabs must not run the agent out of file descriptors). OFD locks
belong to the open file description, like ``flock``: two store instances in one process
exclude each other just like two processes do, closing another descriptor of the same file
does not drop them, and the kernel drops them when their holder dies (``kill -9``
included). A lock on an offset this store already holds is refused by the store itself,
because the kernel would simply grant it again to the same owner.

Offsets are 56 bits of a hash of the id: two live sessions share one with probability
about n²/2⁵⁷ (negligible), and a clash would only make one of them report "in use".

Where the shared file cannot be opened for writing (a read-only sessions directory), the
lock falls back to ``flock(LOCK_EX | LOCK_NB)`` on ``<session>/lock``, as earlier versions
did; that fallback costs one descriptor per held lock.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from .errors import SessionLockedError, SessionNotFoundError, StoreWriteError
from .fsio import open_private

LOCK_TABLE_FILE = "session.locks"
_OFFSET_BYTES = 7


def lock_offset(session_id: str) -> int:
    digest = hashlib.blake2b(session_id.encode("utf-8"), digest_size=_OFFSET_BYTES).digest()
    return int.from_bytes(digest, "big")


def _flock_struct(lock_type: int, offset: int) -> bytes:
    # struct flock: l_type, l_whence, l_start, l_len, l_pid (0: required for OFD locks).
    return struct.pack("hhqqi", lock_type, os.SEEK_SET, offset, 1, 0)


class LockTable:
    """The shared lock file of one store, opened once and on first use."""

    def __init__(self, path: Path) -> None:
        self._path = path
        # Re-entrant: a forgotten SessionLock may be collected (and unlock) inside a call.
        self._mutex = threading.RLock()
        self._fd: int | None = None
        self._unusable = False
        self._held: set[int] = set()

    def _descriptor(self) -> int | None:
        """The shared descriptor, or None when the directory does not allow it."""
        if self._fd is None and not self._unusable:
            try:
                self._fd = open_private(self._path, os.O_RDWR | os.O_CREAT)
            except FileNotFoundError:
                return None  # no sessions directory yet: nothing to lock
            except OSError as error:
                if error.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                    raise
                self._unusable = True
        return self._fd

    def try_lock(self, offset: int) -> bool | None:
        """True: locked now; False: someone holds it; None: use the per-session fallback."""
        with self._mutex:
            fd = self._descriptor()
            if fd is None:
                return None
            if offset in self._held:
                return False
            try:
                fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _flock_struct(fcntl.F_WRLCK, offset))
            except OSError as error:
                if error.errno in (errno.EAGAIN, errno.EACCES):
                    return False
                raise
            self._held.add(offset)
            return True

    def unlock(self, offset: int) -> None:
        with self._mutex:
            if offset not in self._held or self._fd is None:
                return
            self._held.discard(offset)
            fcntl.fcntl(self._fd, fcntl.F_OFD_SETLK, _flock_struct(fcntl.F_UNLCK, offset))

    def close(self) -> None:
        with self._mutex:
            fd, self._fd = self._fd, None
            self._held.clear()
            if fd is not None:
                os.close(fd)

    def __del__(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


class SessionLock:
    """A held session lock; release it with :meth:`release` or by leaving a ``with`` block."""

    def __init__(
        self,
        session_id: str,
        path: Path,
        on_release: Callable[[SessionLock], None],
        table: LockTable | None = None,
    ) -> None:
        self.session_id = session_id
        self._path = path  # <session>/lock: the fallback lock, and proof the session exists
        self._on_release = on_release
        self._table = table
        self._offset: int | None = None  # held through the table
        self._fd: int | None = None  # held through the fallback flock

    @property
    def held(self) -> bool:
        return self._offset is not None or self._fd is not None

    def acquire(self) -> None:
        """Take the lock without waiting; raises SessionLockedError when someone has it."""
        if self.held:
            raise SessionLockedError(self.session_id)
        if not self._path.parent.is_dir():
            raise SessionNotFoundError(self.session_id)
        if self._table is not None:
            offset = lock_offset(self.session_id)
            try:
                taken = self._table.try_lock(offset)
            except OSError as error:
                raise _lock_error(self.session_id, error) from error
            if taken is False:
                raise SessionLockedError(self.session_id)
            if taken:
                # The session may have been deleted meanwhile: only a live one counts.
                if not self._path.parent.is_dir():
                    self._table.unlock(offset)
                    raise SessionNotFoundError(self.session_id)
                self._offset = offset
                return
        self._acquire_flock()

    def _acquire_flock(self) -> None:
        try:
            # Read-only access is enough for flock and also works on a read-only mount.
            fd = open_private(self._path, os.O_RDONLY | os.O_CREAT)
        except FileNotFoundError:
            raise SessionNotFoundError(self.session_id) from None
        except OSError as error:
            raise _lock_error(self.session_id, error) from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionLockedError(self.session_id) from None
        except BaseException:
            os.close(fd)
            raise
        # The session may have been deleted between open() and flock(): the lock would then
        # guard a file that no longer has a name. Only a lock on the live file counts.
        try:
            current = os.stat(self._path)
            mine = os.fstat(fd)
            same_file = (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino)
        except FileNotFoundError:
            same_file = False
        if not same_file:
            os.close(fd)
            raise SessionNotFoundError(self.session_id)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock; calling it again is harmless."""
        offset, self._offset = self._offset, None
        fd, self._fd = self._fd, None
        if offset is None and fd is None:
            return
        try:
            if offset is not None and self._table is not None:
                self._table.unlock(offset)
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                finally:
                    os.close(fd)
        finally:
            self._on_release(self)

    def __enter__(self) -> SessionLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()

    def __del__(self) -> None:
        # A forgotten lock must not stay held for ever.
        offset, self._offset = self._offset, None
        if offset is not None and self._table is not None:
            try:
                self._table.unlock(offset)
            except OSError:
                pass
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


def _lock_error(session_id: str, error: OSError) -> StoreWriteError:
    return StoreWriteError(
        f"cannot lock session {session_id!r}: {error.strerror}", errno=error.errno
    )
