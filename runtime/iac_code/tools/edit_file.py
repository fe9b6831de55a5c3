"""``edit_file``: replace an exact, unique piece of text in a file."""

from __future__ import annotations

import os

from iac_code.tools.base import (
    Access,
    JsonDict,
    ToolContext,
    ToolOutcome,
    diff_content,
)
from iac_code.tools.file_io import read_current_text, write_text
from iac_code.tools.paths import resolve_path
from iac_code.tools.safe_fs import UnsafePath
from iac_code.tools.workspace import (
    BaseFileWriteTool,
    checked_real_path,
    display_name,
    verify_unchanged,
)


class EditFileTool(BaseFileWriteTool):
    name = "edit_file"
    kind = "edit"
    description = (
        "Replace text in an existing file. `old_string` must match the file exactly "
        "(whitespace and indentation included, without read_file's line-number prefix) and "
        "must occur exactly once, unless `replace_all` is true. Include enough surrounding "
        "lines to make it unique. To create a file use write_file."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "File to edit, absolute or relative to the working directory.",
            },
            "old_string": {
                "type": "string",
                "minLength": 1,
                "description": "Exact text to replace.",
            },
            "new_string": {"type": "string", "description": "Replacement text."},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence instead of requiring one (default false).",
            },
        },
        "required": ["path", "old_string", "new_string"],
    }

    def _title(self, tool_input: JsonDict) -> str:
        return f"Edit {tool_input['path']}"

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        path = resolve_path(tool_input["path"], ctx.cwd)
        old_string: str = tool_input["old_string"]
        new_string: str = tool_input["new_string"]
        replace_all = bool(tool_input.get("replace_all"))
        if old_string == new_string:
            return ToolOutcome.error("old_string and new_string are identical; nothing to do.")
        if path.is_dir():
            return ToolOutcome.error(f"{path} is a directory, not a file.")
        try:
            checked = checked_real_path(path, access)
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        try:
            current = await read_current_text(path, ctx, checked)
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        except Exception as exc:
            return ToolOutcome.error(f"Could not read {path}: {exc}")
        if current is None:
            return ToolOutcome.error(f"File not found: {path} (use write_file to create it).")
        occurrences = current.count(old_string)
        if occurrences == 0:
            return ToolOutcome.error(
                f"old_string was not found in {path}. Read the file again and copy the text "
                "exactly, including whitespace."
            )
        if occurrences > 1 and not replace_all:
            return ToolOutcome.error(
                f"old_string occurs {occurrences} times in {path}. Add surrounding lines to "
                "make it unique, or set replace_all to true."
            )
        first_line = current[: current.index(old_string)].count("\n") + 1
        updated = (
            current.replace(old_string, new_string)
            if replace_all
            else current.replace(old_string, new_string, 1)
        )
        try:
            # Again at write time: the read above may have waited on the client.
            verify_unchanged(path, checked)
            via = await write_text(path, updated, ctx, checked)
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        except Exception as exc:
            return ToolOutcome.error(f"Could not write {path}: {exc}")
        replaced = occurrences if replace_all else 1
        plural = "s" if replaced != 1 else ""
        return ToolOutcome(
            model_content=(
                f"Edited {display_name(path, ctx)}: replaced {replaced} occurrence{plural} "
                f"(first at line {first_line})."
            ),
            content=[diff_content(path, current, updated)],
            raw_output={
                "path": os.fspath(path),
                "replacements": replaced,
                "firstLine": first_line,
                "via": via,
            },
        )
