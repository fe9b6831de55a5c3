"""``glob``: files (and directories) matching a pattern below a base directory."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from iac_code.tools.base import (
    Access,
    JsonDict,
    ToolContext,
    ToolOutcome,
    text_content,
)
from iac_code.tools.globbing import GlobMatcher, WalkStats, walk
from iac_code.tools.paths import resolve_path
from iac_code.tools.workspace import BaseDirectoryReadTool


def _find(base: Path, matcher: GlobMatcher, max_entries: int) -> tuple[list[str], WalkStats]:
    stats = WalkStats()
    found = [
        relative + "/" if is_dir else relative
        for relative, _absolute, is_dir in walk(base, max_entries, stats)
        if matcher.matches(relative)
    ]
    return sorted(found), stats


class GlobTool(BaseDirectoryReadTool):
    name = "glob"
    kind = "search"
    read_only = True
    description = (
        "Find files by glob pattern below a base directory (default: the working directory). "
        "`*` and `?` match within one path component, `**` matches any number of directories, "
        "`{a,b}` alternatives and `[...]` character classes work; e.g. '**/*.tf' or "
        "'modules/*/variables.tf'. Returns sorted paths relative to the base; directories end "
        "with '/'. Symlinked directories and .git are not entered."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "minLength": 1,
                "description": "Glob pattern matched against paths relative to `path`.",
            },
            "path": {
                "type": "string",
                "description": "Base directory to search from (default: '.').",
            },
        },
        "required": ["pattern"],
    }

    def _title(self, tool_input: JsonDict) -> str:
        base = self._raw_base(tool_input)
        suffix = "" if base == "." else f" in {base}"
        return f"Find {tool_input['pattern']}{suffix}"

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        base = resolve_path(self._raw_base(tool_input), ctx.cwd)
        if not base.is_dir():
            return ToolOutcome.error(f"Base directory not found: {base}")
        matcher = GlobMatcher.compile(tool_input["pattern"])
        found, stats = await anyio.to_thread.run_sync(
            _find, base, matcher, ctx.limits.walk_max_entries
        )
        cap = ctx.limits.glob_max_results
        body = "\n".join(found[:cap]) if found else "(no matches)"
        if len(found) > cap:
            body += f"\n[results truncated: {len(found) - cap:,} more matches]"
        if stats.exhausted:
            body += (
                f"\n[search stopped after {ctx.limits.walk_max_entries:,} entries; "
                "narrow the base directory or the pattern]"
            )
        return ToolOutcome(
            model_content=body,
            content=[text_content(f"{len(found)} matches")],
            raw_output={
                "base": os.fspath(base),
                "matchCount": len(found),
                "truncated": len(found) > cap or stats.exhausted,
            },
        )
