"""``edit_file``: replace an exact, unique piece of text in a file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import anyio

from iac_code.tools.contract import (
    Access,
    JsonDict,
    ToolContext,
    ToolLimits,
    ToolOutcome,
)
from iac_code.tools.diffs import BoundedDiff, bounded_diff
from iac_code.tools.file_io import NotEditable, read_current_text, write_text
from iac_code.tools.paths import resolve_path
from iac_code.tools.safe_fs import UnsafePath
from iac_code.tools.secret_masking import MASK, overwrites_a_masked_value
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
        "lines to make it unique. To create a file use write_file. Binary files and files "
        "over 8 MiB cannot be edited."
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

    def _planned_diff(
        self, tool_input: JsonDict, path: Path, current: str | None, ctx: ToolContext
    ) -> BoundedDiff | None:
        if current is None or tool_input["old_string"] == tool_input["new_string"]:
            return None
        planned = _plan_edit(
            current,
            tool_input["old_string"],
            tool_input["new_string"],
            bool(tool_input.get("replace_all")),
            path,
            ctx.limits,
        )
        return None if isinstance(planned, str) else planned.diff

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
            current = await read_current_text(path, ctx, checked, ctx.limits.edit_max_bytes)
        except (UnsafePath, NotEditable) as exc:
            return ToolOutcome.error(str(exc))
        except Exception as exc:
            return ToolOutcome.error(f"Could not read {path}: {exc}")
        if current is None:
            return ToolOutcome.error(f"File not found: {path} (use write_file to create it).")
        # Counting, replacing and cutting the diff are linear in the file: off the event loop.
        planned = await anyio.to_thread.run_sync(
            _plan_edit, current, old_string, new_string, replace_all, path, ctx.limits
        )
        if isinstance(planned, str):
            return ToolOutcome.error(planned)
        del current  # the plan keeps what it needs; the old text is not held any longer
        try:
            # Again at write time: the read above may have waited on the client.
            verify_unchanged(path, checked)
            via = await write_text(path, planned.updated, ctx, checked)
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        except Exception as exc:
            return ToolOutcome.error(f"Could not write {path}: {exc}")
        replaced = planned.replaced
        plural = "s" if replaced != 1 else ""
        raw_output: JsonDict = {
            "path": os.fspath(path),
            "replacements": replaced,
            "firstLine": planned.first_line,
            "via": via,
        }
        if planned.diff.excerpt_first_line is not None:
            raw_output["diffExcerptFirstLine"] = planned.diff.excerpt_first_line
        if planned.diff.omitted:
            raw_output["diffOmitted"] = True
        return ToolOutcome(
            model_content=(
                f"Edited {display_name(path, ctx)}: replaced {replaced} occurrence{plural} "
                f"(first at line {planned.first_line})."
            ),
            content=[planned.diff.content],
            raw_output=raw_output,
        )


@dataclass
class _Plan:
    updated: str
    replaced: int
    first_line: int
    diff: BoundedDiff


def _plan_edit(
    current: str,
    old_string: str,
    new_string: str,
    replace_all: bool,
    path: Path,
    limits: ToolLimits,
) -> _Plan | str:
    """The edit, or the error message for the model."""
    if (refused := overwrites_a_masked_value(new_string, current)) is not None:
        return refused
    occurrences = current.count(old_string)
    if occurrences == 0 and MASK in old_string:
        return (
            f"old_string was not found in {path}: it contains {MASK}, which stands for a "
            "secret hidden from you, not the file's real text. Choose old_string from lines "
            "without secrets."
        )
    if occurrences == 0:
        return (
            f"old_string was not found in {path}. Read the file again and copy the text "
            "exactly, including whitespace."
        )
    if occurrences > 1 and not replace_all:
        return (
            f"old_string occurs {occurrences} times in {path}. Add surrounding lines to "
            "make it unique, or set replace_all to true."
        )
    first_index = current.index(old_string)
    first_line = current.count("\n", 0, first_index) + 1
    replaced = occurrences if replace_all else 1
    grown = len(current) + replaced * (len(new_string) - len(old_string))
    if grown > limits.edit_max_bytes:
        return (
            f"The edit would make {path} {grown:,} characters long, more than the "
            f"{limits.edit_max_bytes:,}-byte edit limit; nothing was changed."
        )
    updated = (
        current.replace(old_string, new_string)
        if replace_all
        else current.replace(old_string, new_string, 1)
    )
    diff = bounded_diff(path, current, updated, limits.diff_max_chars)
    return _Plan(updated=updated, replaced=replaced, first_line=first_line, diff=diff)
