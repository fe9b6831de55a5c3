"""Reading and writing whole text files for the edit tools, locally or through the client.

Local writes are atomic: the new content goes to a temporary file in the same directory,
is flushed to disk, gets the old file's permission bits, and then replaces the target with
``os.replace``. A crash leaves either the old or the new file, never half of one. Writing
to a symlink writes the file it points at (the link stays a link).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

import anyio

from iac_code.tools.base import ToolContext
from iac_code.tools.paths import real_path


def _current_umask() -> int:
    """The process umask, read without changing it (``os.umask`` would race other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _default_file_mode() -> int:
    """The mode a plain ``open(..., "w")`` would give a new file under the current umask."""
    return 0o666 & ~_current_umask()


def atomic_write_local(path: Path, content: str) -> None:
    """Replace ``path`` (or its symlink target) with ``content`` atomically."""
    target = real_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = _default_file_mode()
    descriptor, temp_name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise


def _read_local(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None


async def read_current_text(path: Path, ctx: ToolContext) -> str | None:
    """The file's current text (None when it does not exist).

    Through the client when it can read files, so unsaved editor changes are what gets
    edited; a client error for a file that does not exist on disk counts as "no file".
    """
    if ctx.fs_read is not None:
        try:
            return await ctx.fs_read.read_text_file(os.fspath(path), None, None)
        except Exception:
            if not await anyio.to_thread.run_sync(os.path.lexists, path):
                return None
            raise
    return await anyio.to_thread.run_sync(_read_local, path)


async def write_text(path: Path, content: str, ctx: ToolContext) -> str:
    """Write through the client when it can write files, else atomically on disk.

    Returns "client" or "disk" (reported in rawOutput).
    """
    if ctx.fs_write is not None:
        await ctx.fs_write.write_text_file(os.fspath(path), content)
        return "client"
    await anyio.to_thread.run_sync(atomic_write_local, path, content)
    return "disk"
