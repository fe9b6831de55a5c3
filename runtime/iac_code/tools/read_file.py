"""``read_file``: a line range of a text file, through the client's editor when it can."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import anyio

from iac_code.tools.contract import (
    Access,
    AccessKind,
    JsonDict,
    Tool,
    ToolContext,
    ToolOutcome,
    text_content,
)
from iac_code.tools.paths import resolve_path
from iac_code.tools.safe_fs import UnsafePath, open_regular_for_reading
from iac_code.tools.text import BINARY_SNIFF_BYTES, decode_text, looks_binary, shorten_line
from iac_code.tools.workspace import (
    checked_real_path,
    display_name,
    path_access,
    path_locations,
    verify_unchanged,
)


@dataclass
class _Lines:
    lines: list[str]
    more: bool  # lines follow after the returned ones
    stopped_at_byte_cap: bool = False


def _read_line(handle: BinaryIO, max_bytes: int) -> bytes | None:
    """Read one line but keep at most ``max_bytes`` of it (the rest is skipped, not kept)."""
    chunk = handle.readline(max_bytes)
    if not chunk:
        return None
    if chunk.endswith(b"\n") or len(chunk) < max_bytes:
        return chunk
    # An overlong line: drop the rest of it so memory stays bounded.
    while True:
        rest = handle.readline(64 * 1024)
        if not rest or rest.endswith(b"\n"):
            return chunk + b"\xe2\x80\xa6"  # "…" marks the cut


class _Unreadable(Exception):
    """The local file cannot be shown; the message says why (for the model)."""


def _read_local(path: Path, checked: Path, offset: int, limit: int, ctx: ToolContext) -> _Lines:
    """Read lines of the regular file at ``checked`` (the real path the decision was about)."""
    try:
        status = os.stat(checked)
    except FileNotFoundError:
        raise _Unreadable(f"File not found: {path}") from None
    if stat.S_ISDIR(status.st_mode):
        raise _Unreadable(f"{path} is a directory; use list_files to see its entries.")
    try:
        descriptor = open_regular_for_reading(checked)
    except FileNotFoundError:
        raise _Unreadable(f"File not found: {path}") from None
    except UnsafePath as exc:
        raise _Unreadable(str(exc)) from None
    except OSError as exc:
        raise _Unreadable(f"Could not read {path}: {exc.strerror or exc}") from None
    with open(descriptor, "rb") as handle:
        if looks_binary(handle.read(BINARY_SNIFF_BYTES)):
            size = os.fstat(handle.fileno()).st_size
            raise _Unreadable(
                f"{path} appears to be a binary file ({size:,} bytes); read_file only shows text."
            )
        handle.seek(0)
        return _read_lines(handle, offset, limit, ctx)


def _read_lines(handle: BinaryIO, offset: int, limit: int, ctx: ToolContext) -> _Lines:
    per_line = ctx.limits.line_max_chars * 4 + 1
    budget = ctx.limits.read_max_bytes
    lines: list[str] = []
    number = 0
    while True:
        raw = _read_line(handle, per_line)
        if raw is None:
            return _Lines(lines, more=False)
        number += 1
        if number < offset:
            continue
        if len(lines) >= limit:
            return _Lines(lines, more=True)
        budget -= len(raw)
        if budget < 0:
            return _Lines(lines, more=True, stopped_at_byte_cap=True)
        lines.append(decode_text(raw).rstrip("\r\n"))


def _format(lines: list[str], first_number: int, ctx: ToolContext) -> str:
    width = ctx.limits.line_max_chars
    return "\n".join(
        f"{number:>6}\t{shorten_line(line, width)}"
        for number, line in enumerate(lines, start=first_number)
    )


class ReadFileTool(Tool):
    name = "read_file"
    kind = "read"
    read_only = True
    masks_output = True
    description = (
        "Read a text file and return its lines prefixed with 1-based line numbers "
        "(number, tab, text). Relative paths are resolved against the session's working "
        "directory. Returns at most 2000 lines per call by default; use `offset` and `limit` "
        "to page through long files. Binary files are refused. The line-number prefix is not "
        "part of the file: leave it out when quoting text for edit_file."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "File to read, absolute or relative to the working directory.",
            },
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "1-based line number to start from (default 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Maximum number of lines to return (default 2000).",
            },
        },
        "required": ["path"],
    }

    def _title(self, tool_input: JsonDict) -> str:
        return f"Read {tool_input['path']}"

    def _locations(self, tool_input: JsonDict, ctx: ToolContext) -> list[JsonDict]:
        return path_locations(resolve_path(tool_input["path"], ctx.cwd), tool_input.get("offset"))

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return path_access(AccessKind.READ, tool_input["path"], ctx)

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        path = resolve_path(tool_input["path"], ctx.cwd)
        offset: int = tool_input.get("offset") or 1
        limit: int = tool_input.get("limit") or ctx.limits.read_default_lines
        if ctx.fs_read is not None:
            try:
                # The client opens the path by name, so check before and after that it still
                # leads where the decision said; a swapped symlink discards the text.
                checked = checked_real_path(path, access)
                # Ask for one extra line to learn whether more follow.
                text = await ctx.fs_read.read_text_file(os.fspath(path), offset, limit + 1)
                verify_unchanged(path, checked)
            except UnsafePath as exc:
                return ToolOutcome.error(str(exc))
            except Exception as exc:
                return ToolOutcome.error(f"Could not read {path} through the client: {exc}")
            if "\x00" in text:
                return ToolOutcome.error(f"{path} appears to be a binary file; not shown.")
            all_lines = text.splitlines()
            result = _Lines(all_lines[:limit], more=len(all_lines) > limit)
            source = "client"
        else:
            try:
                checked = checked_real_path(path, access)
                # Abandoned on cancel: a read stuck on a slow file system must not hold up
                # the turn (FIFOs and devices are refused before they are opened).
                result = await anyio.to_thread.run_sync(
                    _read_local, path, checked, offset, limit, ctx, abandon_on_cancel=True
                )
            except (_Unreadable, UnsafePath) as exc:
                return ToolOutcome.error(str(exc))
            source = "disk"
        return self._outcome(path, offset, result, source, ctx)

    def _outcome(
        self, path: Path, offset: int, result: _Lines, source: str, ctx: ToolContext
    ) -> ToolOutcome:
        last = offset + len(result.lines) - 1
        if result.lines:
            body = _format(result.lines, offset, ctx)
        elif offset > 1:
            body = f"(no lines: offset {offset} is past the end of the file)"
        else:
            body = "(empty file)"
        if result.more:
            reason = " (read size cap reached)" if result.stopped_at_byte_cap else ""
            body += (
                f"\n[showing lines {offset}-{last}{reason}; more lines follow, "
                f"continue with offset={last + 1}]"
            )
        raw: JsonDict = {
            "path": os.fspath(path),
            "startLine": offset,
            "lineCount": len(result.lines),
            "moreLines": result.more,
            "source": source,
        }
        summary = f"Read {len(result.lines)} lines of {display_name(path, ctx)}"
        return ToolOutcome(model_content=body, content=[text_content(summary)], raw_output=raw)
