"""Exclusive per-session locks shared by every process using the same sessions directory.

The lock is ``flock(LOCK_EX | LOCK_NB)`` on ``<session>/lock``. flock belongs to the open
file description, so two store instances in one process exclude each other just like two
processes do, and the kernel drops the lock when its holder dies (``kill -9`` included).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from .errors import SessionLockedError, SessionNotFoundError, StoreWriteError
from .fsio import open_private


class SessionLock:
    """A held session lock; release it with :meth:`release` or by leaving a ``with`` block."""

    def __init__(
        self, session_id: str, path: Path, on_release: Callable[[SessionLock], None]
    ) -> None:
        self.session_id = session_id
        self._path = path
        self._on_release = on_release
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock without waiting; raises SessionLockedError when someone has it."""
        if self._fd is not None:
            raise SessionLockedError(self.session_id)
        try:
            # Read-only access is enough for flock and also works on a read-only mount.
            fd = open_private(self._path, os.O_RDONLY | os.O_CREAT)
        except FileNotFoundError:
            raise SessionNotFoundError(self.session_id) from None
        except OSError as error:
            raise StoreWriteError(
                f"cannot open the lock of session {self.session_id!r}: {error.strerror}",
                errno=error.errno,
            ) from error
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
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
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
        # A forgotten lock must not keep its descriptor (and the lock) forever.
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
