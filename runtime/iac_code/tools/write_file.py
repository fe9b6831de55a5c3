"""``write_file``: create or overwrite a whole file (atomic locally; via the client if it can)."""

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
from iac_code.tools.diffs import BoundedDiff, bounded_diff
from iac_code.tools.file_io import NotEditable, read_current_text, write_text
from iac_code.tools.paths import resolve_path
from iac_code.tools.safe_fs import UnsafePath
from iac_code.tools.secret_masking import overwrites_a_masked_value
from iac_code.tools.workspace import (
    BaseFileWriteTool,
    checked_real_path,
    display_name,
    verify_unchanged,
)


def _line_count(text: str) -> int:
    return len(text.splitlines())


class WriteFileTool(BaseFileWriteTool):
    name = "write_file"
    kind = "edit"
    description = (
        "Create a file or replace its whole content. Parent directories are created. Prefer "
        "edit_file for changing part of an existing file. Relative paths are resolved against "
        "the working directory."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "File to write, absolute or relative to the working directory.",
            },
            "content": {"type": "string", "description": "The complete new file content."},
        },
        "required": ["path", "content"],
    }

    def _title(self, tool_input: JsonDict) -> str:
        return f"Write {tool_input['path']}"

    def _planned_diff(
        self, tool_input: JsonDict, path: Path, current: str | None, ctx: ToolContext
    ) -> BoundedDiff | None:
        return bounded_diff(path, current, tool_input["content"], ctx.limits.diff_max_chars)

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        path = resolve_path(tool_input["path"], ctx.cwd)
        content: str = tool_input["content"]
        if path.is_dir():
            return ToolOutcome.error(f"{path} is a directory; give a file path.")
        try:
            checked = checked_real_path(path, access)
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        old_unknown = False  # an existing file too large or binary to read back for the diff
        try:
            old_text = await read_current_text(path, ctx, checked, ctx.limits.edit_max_bytes)
        except NotEditable:
            old_text, old_unknown = None, True
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        except Exception as exc:
            return ToolOutcome.error(f"Could not read the current content of {path}: {exc}")
        if (refused := overwrites_a_masked_value(content, old_text)) is not None:
            return ToolOutcome.error(refused)
        try:
            # Again at write time: the read above may have waited on the client.
            verify_unchanged(path, checked)
            via = await write_text(path, content, ctx, checked)
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        except Exception as exc:
            return ToolOutcome.error(f"Could not write {path}: {exc}")
        name = display_name(path, ctx)
        created = old_text is None and not old_unknown
        verb = "Created" if created else "Wrote"
        if old_unknown:
            shown = text_content(
                f"Replaced the whole of {path}; its previous content was too large or binary "
                "to show."
            )
        else:
            diff = await anyio.to_thread.run_sync(
                bounded_diff, path, old_text, content, ctx.limits.diff_max_chars
            )
            shown = diff.content
        return ToolOutcome(
            model_content=f"{verb} {name} ({_line_count(content)} lines).",
            content=[shown],
            raw_output={
                "path": os.fspath(path),
                "created": created,
                "bytes": len(content.encode("utf-8")),
                "via": via,
            },
        )
