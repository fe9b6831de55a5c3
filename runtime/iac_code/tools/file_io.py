"""Reading and writing whole text files for the edit tools, locally or through the client.

Local reads and writes go through :mod:`iac_code.tools.safe_fs`: they touch exactly the real
location the permission decision was about (``checked``), refuse when a symlink was swapped
in on the way, and refuse non-regular files. Writes are atomic (temporary file, fsync,
rename), keep the old file's permission bits, and for a symlink write the file it points at
(the link stays a link, as ``checked`` is its resolved target).
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from iac_code.tools.contract import ToolContext
from iac_code.tools.safe_fs import FileTooLarge, read_regular_bytes, replace_file
from iac_code.tools.text import BINARY_SNIFF_BYTES, looks_binary


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


def atomic_write_local(checked: Path, content: str) -> None:
    """Replace the file at ``checked`` (a real, absolute path) with ``content`` atomically."""
    replace_file(checked, content.encode("utf-8"), _default_file_mode())


class NotEditable(Exception):
    """The file is too large or binary; the message says so (for the model)."""


def _read_local(path: Path, checked: Path, max_bytes: int | None) -> str | None:
    try:
        data = read_regular_bytes(checked, max_bytes)
    except FileTooLarge as exc:
        raise NotEditable(_too_large(path, exc.size, exc.cap)) from None
    if data is None:
        return None
    if max_bytes is not None and (b"\x00" in data or looks_binary(data[:BINARY_SNIFF_BYTES])):
        raise NotEditable(f"{path} appears to be a binary file; only text files can be edited.")
    return data.decode("utf-8", errors="replace")


def _size_on_disk(path: Path) -> int | None:
    """The size of what ``path`` names (following links), 0 for a dangling link, None if absent."""
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0 if os.path.lexists(path) else None
    except OSError:
        return 0  # the client may still be able to read it; its answer is checked below


def _too_large(path: Path, size: int, cap: int) -> str:
    return (
        f"{path} is too large to edit ({size:,} bytes; the limit is {cap:,} bytes). "
        "Change it with a command (sed, a script) instead."
    )


def _check_client_text(path: Path, text: str, max_bytes: int | None) -> str:
    if max_bytes is None:
        return text
    if len(text) > max_bytes:
        raise NotEditable(
            f"{path} is too large to edit ({len(text):,} characters; the limit is "
            f"{max_bytes:,} bytes). Change it with a command (sed, a script) instead."
        )
    if "\x00" in text:
        raise NotEditable(f"{path} appears to be a binary file; only text files can be edited.")
    return text


async def read_current_text(
    path: Path, ctx: ToolContext, checked: Path, max_bytes: int | None = None
) -> str | None:
    """The file's current text (None when it does not exist).

    Through the client when it can read files, so unsaved editor changes are what gets
    edited. A file that does not exist on disk is new: the client is not asked at all (it
    would answer "not found", and clients such as acpx show that error to the user although
    nothing went wrong), and a client error for a file that vanished meanwhile also counts as
    "no file". Locally the read is of ``checked`` (see the module docstring) and can be
    abandoned when the call is cancelled. With ``max_bytes``, a larger or binary file raises
    :class:`NotEditable` (locally before more than the cap is read).
    """
    if ctx.fs_read is not None:
        size = await anyio.to_thread.run_sync(_size_on_disk, path)
        if size is None:
            return None
        if max_bytes is not None and size > max_bytes:
            # Refused before the client is asked: its answer would be the whole huge text.
            raise NotEditable(_too_large(path, size, max_bytes))
        try:
            text = await ctx.fs_read.read_text_file(os.fspath(path), None, None)
        except Exception:
            if not await anyio.to_thread.run_sync(os.path.lexists, path):
                return None
            raise
        return _check_client_text(path, text, max_bytes)
    return await anyio.to_thread.run_sync(
        _read_local, path, checked, max_bytes, abandon_on_cancel=True
    )


async def write_text(path: Path, content: str, ctx: ToolContext, checked: Path) -> str:
    """Write through the client when it can write files, else atomically on disk.

    Returns "client" or "disk" (reported in rawOutput).
    """
    if ctx.fs_write is not None:
        await ctx.fs_write.write_text_file(os.fspath(path), content)
        return "client"
    await anyio.to_thread.run_sync(atomic_write_local, checked, content)
    return "disk"
