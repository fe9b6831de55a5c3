"""Low-level file primitives with the store's durability and permission rules.

* Everything the store creates is private: directories 0700, files 0600. The mode is set
  with an explicit chmod after creation so the process umask cannot widen *or* narrow it.
* Appends are one ``os.write`` of whole lines on an ``O_APPEND`` descriptor. If a write fails
  half-way (disk full), the file is cut back to its previous length so a failed append never
  leaves a fragment behind.
* Rewrites go through a private temporary file and ``os.replace``, so readers see either the
  old or the new content, never a mix.

Functions here raise plain ``OSError``; the store maps them to its own exceptions.
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def make_private_dir(path: Path) -> None:
    """Create one directory with mode 0700; raises FileExistsError when it exists."""
    os.mkdir(path, PRIVATE_DIR_MODE)
    os.chmod(path, PRIVATE_DIR_MODE)


def ensure_private_dirs(path: Path) -> None:
    """Create ``path`` and any missing parents; only the directories created here get 0700."""
    if path.is_dir():
        return
    parent = path.parent
    if parent != path:
        ensure_private_dirs(parent)
    try:
        make_private_dir(path)
    except FileExistsError:
        if not path.is_dir():
            # A file where a folder must be: "exists" would be a misleading reason.
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path)) from None


def open_private(path: Path, flags: int) -> int:
    """``os.open`` with 0600 for a file this call may create, fixing the mode if needed."""
    fd = os.open(path, flags | _O_CLOEXEC, PRIVATE_FILE_MODE)
    if flags & os.O_CREAT:
        try:
            if os.fstat(fd).st_mode & 0o777 != PRIVATE_FILE_MODE:
                os.fchmod(fd, PRIVATE_FILE_MODE)
        except OSError:
            # An existing file on a read-only file system cannot be chmod-ed; opening it
            # for reading is still useful (e.g. to take a lock), so the error is not fatal.
            pass
    return fd


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data``; a regular file only writes short when the disk is full."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def create_private_file(path: Path, data: bytes = b"") -> None:
    """Create a new 0600 file holding ``data``; raises FileExistsError when it exists."""
    fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def replace_file(path: Path, data: bytes, *, durable: bool) -> None:
    """Atomically give ``path`` the content ``data`` (temporary file + ``os.replace``).

    With ``durable`` the new content and the directory entry are fsync-ed, so the
    replacement also survives a power cut, not only a process crash.
    """
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = open_private(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    if durable:
        sync_directory(path.parent)


def sync_directory(path: Path) -> None:
    """fsync a directory so that renames and creations inside it are durable."""
    fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_lines(fd: int, data: bytes, *, durable: bool) -> None:
    """Append ``data`` (whole lines, ending in a newline) to a file opened O_RDWR|O_APPEND.

    If the file does not end with a newline (a torn line left by a crash), a newline is
    written first so the new record starts on a line of its own instead of being glued
    onto the fragment. On failure the file is truncated back to its previous length.
    """
    end = os.lseek(fd, 0, os.SEEK_END)
    if end and os.pread(fd, 1, end - 1) != b"\n":
        data = b"\n" + data
    view = memoryview(data)
    written_any = False
    try:
        while view:
            written = os.write(fd, view)
            written_any = True
            view = view[written:]
        if durable:
            os.fsync(fd)
    except BaseException:
        if written_any:
            try:
                os.ftruncate(fd, end)
            except OSError:
                pass
        raise


def read_file(path: Path) -> bytes:
    """The whole content of ``path``."""
    fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    try:
        return read_from(fd, 0)
    finally:
        os.close(fd)


def read_from(fd: int, offset: int) -> bytes:
    """Everything from ``offset`` to the current end of the open file ``fd``."""
    size = os.fstat(fd).st_size
    chunks: list[bytes] = []
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)
