"""Reading and writing exactly the file that the permission decision was about.

The decision is made on a path's *real* location (every symlink resolved, see
:mod:`iac_code.tools.paths`). Between that check and the file operation, something else (a
command the model started, another program) could replace a directory on the way with a
symlink to somewhere else. Opening the path by name again would follow that new symlink and
land outside the workspace, or on a credential file.

So the operations here take the checked real path and walk it from ``/`` one component at a
time with ``O_NOFOLLOW`` directory descriptors (``openat``): the real path has no symlinks in
it, so meeting one now means the tree changed, and the operation is refused. Once a directory
is open, renaming or swapping its path no longer affects what the descriptor refers to.
The final file is opened or replaced relative to its directory descriptor, never by name.

Files that are not regular (FIFOs, sockets, devices) are refused before they are opened for
reading, and opened with ``O_NONBLOCK`` so that one swapped in at the last moment cannot block.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

# O_PATH (Linux) opens a directory that may be searched but not listed, as "/home" often is.
_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(OSError):
    """The path cannot be used as it was checked; the message says why (for the model)."""


def file_type_name(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def _changed(path: Path, component: str) -> UnsafePath:
    return UnsafePath(
        f"Refused: {path} changed after it was checked ({component!r} is now a symlink or not "
        "a directory); nothing was read or written. Check the path and try again."
    )


@contextlib.contextmanager
def open_directory(directory: Path, *, create: bool = False) -> Iterator[int]:
    """A descriptor of ``directory`` (absolute, symlink-free), walked without following links.

    ``create`` makes missing directories on the way (for writes).
    """
    if not directory.is_absolute():
        raise ValueError(f"not an absolute path: {directory}")
    descriptor = os.open("/", _DIR_FLAGS)
    try:
        for name in directory.parts[1:]:
            try:
                following = os.open(name, _DIR_FLAGS, dir_fd=descriptor)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=descriptor)
                try:
                    following = os.open(name, _DIR_FLAGS, dir_fd=descriptor)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise _changed(directory, name) from None
                    raise
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _changed(directory, name) from None
                raise
            os.close(descriptor)
            descriptor = following
        yield descriptor
    finally:
        os.close(descriptor)


def _lstat_at(name: str, directory_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def open_regular_for_reading(checked: Path) -> int:
    """An ``O_RDONLY`` descriptor of the regular file at ``checked`` (real, absolute path).

    Raises FileNotFoundError when it does not exist, :class:`UnsafePath` when a component is a
    symlink now or the file is not a regular file.
    """
    with open_directory(checked.parent) as directory_fd:
        status = _lstat_at(checked.name, directory_fd)
        if status is None:
            raise FileNotFoundError(errno.ENOENT, "No such file", os.fspath(checked))
        if stat.S_ISLNK(status.st_mode):
            raise _changed(checked, checked.name)
        if not stat.S_ISREG(status.st_mode):
            raise UnsafePath(
                f"{checked} is {file_type_name(status.st_mode)}, not a regular file; "
                "only regular files can be read."
            )
        try:
            descriptor = os.open(checked.name, _READ_FLAGS, dir_fd=directory_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _changed(checked, checked.name) from None
            raise
    # Checked again on the open file: it may have been swapped since the lstat above.
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise UnsafePath(f"{checked} is {file_type_name(mode)}, not a regular file.")
    os.set_blocking(descriptor, True)
    return descriptor


class FileTooLarge(Exception):
    """The file is larger than the caller's cap; nothing beyond the cap was read."""

    def __init__(self, size: int, cap: int) -> None:
        super().__init__(f"{size:,} bytes is more than the {cap:,}-byte limit")
        self.size = size
        self.cap = cap


def read_regular_bytes(checked: Path, max_bytes: int | None = None) -> bytes | None:
    """The whole content of the regular file at ``checked``; None when it does not exist.

    With ``max_bytes``, a larger file raises :class:`FileTooLarge` after reading at most
    ``max_bytes + 1`` bytes (the size is taken from ``fstat`` first, and a file that grows
    while it is read is caught by the bounded read).
    """
    try:
        descriptor = open_regular_for_reading(checked)
    except FileNotFoundError:
        return None
    with open(descriptor, "rb") as handle:
        if max_bytes is None:
            return handle.read()
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise FileTooLarge(size, max_bytes)
        data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise FileTooLarge(len(data), max_bytes)
        return data


def replace_file(checked: Path, data: bytes, new_file_mode: int) -> None:
    """Atomically replace (or create) the file at ``checked`` with ``data``.

    The new content goes to a temporary file in the same (descriptor-held) directory, is
    flushed to disk, gets the old file's permission bits (``new_file_mode`` for a new file)
    and is renamed over the target relative to that directory. A crash leaves the old or the
    new file, never half of one.
    """
    with open_directory(checked.parent, create=True) as directory_fd:
        name = checked.name
        status = _lstat_at(name, directory_fd)
        if status is not None and stat.S_ISLNK(status.st_mode):
            raise _changed(checked, name)
        if status is not None and stat.S_ISDIR(status.st_mode):
            raise UnsafePath(f"{checked} is a directory; give a file path.")
        mode = stat.S_IMODE(status.st_mode) if status is not None else new_file_mode
        temp_name = f".{name}.{secrets.token_hex(6)}.tmp"
        descriptor = os.open(temp_name, _TEMP_FLAGS, 0o600, dir_fd=directory_fd)
        try:
            with open(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                os.fchmod(handle.fileno(), mode)
            os.replace(temp_name, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp_name, dir_fd=directory_fd)
            raise
