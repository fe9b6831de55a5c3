"""``list_files``: the entries of one directory, sorted, directories marked with ``/``."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from iac_code.tools.contract import (
    Access,
    JsonDict,
    ToolContext,
    ToolOutcome,
    text_content,
)
from iac_code.tools.paths import resolve_path
from iac_code.tools.safe_fs import UnsafePath
from iac_code.tools.workspace import BaseDirectoryReadTool, checked_real_path, display_name


def _entries(directory: Path) -> list[str]:
    names: list[str] = []
    with os.scandir(directory) as iterator:
        for entry in iterator:
            try:
                is_dir = entry.is_dir()  # follows symlinks: a link to a directory lists as one
            except OSError:
                is_dir = False
            names.append(entry.name + "/" if is_dir else entry.name)
    return sorted(names)


class ListFilesTool(BaseDirectoryReadTool):
    name = "list_files"
    kind = "read"
    read_only = True
    description = (
        "List the entries of a directory (not recursive), sorted by name. Directory names end "
        "with '/'. Defaults to the working directory. Use glob for recursive listings."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Directory to list, absolute or relative (default: '.').",
            }
        },
    }

    def _title(self, tool_input: JsonDict) -> str:
        return f"List {self._raw_base(tool_input)}"

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        directory = resolve_path(self._raw_base(tool_input), ctx.cwd)
        try:
            checked_real_path(directory, access)  # not swapped for a symlink since the check
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        if not directory.exists():
            return ToolOutcome.error(f"Directory not found: {directory}")
        if not directory.is_dir():
            return ToolOutcome.error(f"{directory} is a file, not a directory; use read_file.")
        try:
            names = await anyio.to_thread.run_sync(_entries, directory)
        except OSError as exc:
            return ToolOutcome.error(f"Could not list {directory}: {exc.strerror or exc}")
        cap = ctx.limits.list_max_entries
        shown = names[:cap]
        body = "\n".join(shown) if shown else "(empty directory)"
        if len(names) > cap:
            body += f"\n[listing truncated: {len(names) - cap:,} more entries]"
        summary = f"{len(names)} entries in {display_name(directory, ctx)}"
        return ToolOutcome(
            model_content=body,
            content=[text_content(summary)],
            raw_output={
                "path": os.fspath(directory),
                "entryCount": len(names),
                "truncated": len(names) > cap,
            },
        )
