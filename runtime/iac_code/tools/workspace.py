"""Helpers the file tools share: the Access of a path, and display paths."""

from __future__ import annotations

import os
from pathlib import Path

from iac_code.tools.base import Access, AccessKind, JsonDict, Tool, ToolContext
from iac_code.tools.paths import is_inside_roots, is_sensitive, resolve_path, sensitive_reason


def path_access(kind: AccessKind, raw_path: str, ctx: ToolContext) -> Access:
    """The Access of a tool touching one path given by the model."""
    path = resolve_path(raw_path, ctx.cwd)
    outside = not is_inside_roots(path, ctx.roots)
    sensitive = is_sensitive(path)
    reasons: list[str] = []
    if outside:
        reasons.append(f"{path} is outside the workspace")
    if sensitive:
        reasons.append(sensitive_reason(path))
    return Access(
        kind=kind,
        paths=(os.fspath(path),),
        outside_workspace=outside,
        sensitive=sensitive,
        reasons=tuple(reasons),
    )


def display_name(path: Path, ctx: ToolContext) -> str:
    """A short name for titles: relative to the cwd when inside it, else absolute."""
    try:
        relative = path.relative_to(ctx.cwd)
    except ValueError:
        return os.fspath(path)
    text = os.fspath(relative)
    return "." if text == "." else text


class BaseDirectoryReadTool(Tool):
    """A read or search tool working under an optional ``path`` (default: the session cwd).

    Shares how such tools locate and classify their call; subclasses keep their own title
    and behaviour.
    """

    @staticmethod
    def _raw_base(tool_input: JsonDict) -> str:
        return tool_input.get("path") or "."

    def _locations(self, tool_input: JsonDict, ctx: ToolContext) -> list[JsonDict]:
        return [{"path": os.fspath(resolve_path(self._raw_base(tool_input), ctx.cwd))}]

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return path_access(AccessKind.READ, self._raw_base(tool_input), ctx)


class BaseFileWriteTool(Tool):
    """A tool that changes the one file named by its ``path`` input."""

    def _locations(self, tool_input: JsonDict, ctx: ToolContext) -> list[JsonDict]:
        return [{"path": os.fspath(resolve_path(tool_input["path"], ctx.cwd))}]

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return path_access(AccessKind.WRITE, tool_input["path"], ctx)
