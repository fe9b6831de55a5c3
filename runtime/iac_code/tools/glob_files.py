"""``glob``: files (and directories) matching a pattern below a base directory."""

from __future__ import annotations

import os

from iac_code.tools.contract import (
    Access,
    JsonDict,
    ToolContext,
    ToolOutcome,
    text_content,
)
from iac_code.tools.paths import resolve_path
from iac_code.tools.safe_fs import UnsafePath
from iac_code.tools.search_process import SearchFailed, SearchTimeout, run_search
from iac_code.tools.workspace import BaseDirectoryReadTool, checked_real_path


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
        try:
            checked_real_path(base, access)  # not swapped for a symlink since the check
        except UnsafePath as exc:
            return ToolOutcome.error(str(exc))
        if not base.is_dir():
            return ToolOutcome.error(f"Base directory not found: {base}")
        limits = ctx.limits
        request = {
            "op": "glob",
            "base": os.fspath(base),
            "pattern": tool_input["pattern"],
            "max_entries": limits.walk_max_entries,
            "max_results": limits.glob_max_results,
        }
        try:
            answer = await run_search(request, limits.search_timeout_s)
        except SearchTimeout as exc:
            return ToolOutcome.error(
                f"glob stopped: matching {exc} (the pattern may be too expensive to match, or "
                "the tree is too large). Simplify the pattern or narrow the base directory.",
                raw_output={"timedOut": True},
            )
        except SearchFailed as exc:
            return ToolOutcome.error(f"glob failed: {exc}")
        found: list[str] = answer["found"]
        total: int = answer["total"]
        cap = limits.glob_max_results
        body = "\n".join(found) if found else "(no matches)"
        if total > cap:
            body += f"\n[results truncated: {total - cap:,} more matches]"
        if answer["walk_exhausted"]:
            body += (
                f"\n[search stopped after {ctx.limits.walk_max_entries:,} entries; "
                "narrow the base directory or the pattern]"
            )
        return ToolOutcome(
            model_content=body,
            content=[text_content(f"{total} matches")],
            raw_output={
                "base": os.fspath(base),
                "matchCount": total,
                "truncated": total > cap or bool(answer["walk_exhausted"]),
            },
        )
