"""Helpers the file tools share: the Access of a path, and display paths."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from iac_code.tools.contract import Access, AccessKind, JsonDict, Tool, ToolContext
from iac_code.tools.diffs import BoundedDiff
from iac_code.tools.file_io import NotEditable, read_current_text
from iac_code.tools.paths import (
    is_inside_roots,
    is_sensitive,
    real_path,
    resolve_path,
    sensitive_reason,
)
from iac_code.tools.safe_fs import UnsafePath


def _shown(path: Path, real: Path) -> str:
    """The path, and where it really leads when a symlink is on the way."""
    return os.fspath(path) if real == path else f"{path} (a symlink to {real})"


def path_access(kind: AccessKind, raw_path: str, ctx: ToolContext) -> Access:
    """The Access of a tool touching one path given by the model."""
    path = resolve_path(raw_path, ctx.cwd)
    real = real_path(path)
    outside = not is_inside_roots(path, ctx.roots)
    sensitive = is_sensitive(path)
    reasons: list[str] = []
    if outside:
        reasons.append(f"{_shown(path, real)} is outside the workspace")
    if sensitive:
        reasons.append(sensitive_reason(_shown(path, real)))
    return Access(
        kind=kind,
        paths=(os.fspath(path),),
        real_paths=(os.fspath(real),),
        outside_workspace=outside,
        sensitive=sensitive,
        reasons=tuple(reasons),
    )


def path_locations(path: Path, line: int | None = None) -> list[JsonDict]:
    """ACP locations of ``path``; a second one names the real target behind a symlink, so a
    permission prompt shows where the call really goes."""
    location: JsonDict = {"path": os.fspath(path)}
    if line:
        location["line"] = line
    locations = [location]
    try:
        real = real_path(path)
    except OSError:
        return locations
    if real != path:
        locations.append({"path": os.fspath(real)})
    return locations


def checked_real_path(path: Path, access: Access | None) -> Path:
    """The real location of ``path`` that the permission decision was about.

    Re-resolved now and compared (see :func:`verify_unchanged`); without a decision (direct
    calls) it is simply the real location now.
    """
    if access is None or not access.real_paths:
        return real_path(path)
    checked = Path(access.real_paths[0])
    verify_unchanged(path, checked)
    return checked


def verify_unchanged(path: Path, checked: Path) -> None:
    """Raise :class:`UnsafePath` when ``path`` no longer leads to ``checked``: a symlink was
    swapped in since the check, so it leads somewhere nobody decided about."""
    now = real_path(path)
    if now != checked:
        raise UnsafePath(
            f"Refused: {path} now leads to {now}, but permission was decided for {checked} "
            "(a symlink changed in between); nothing was read or written."
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
        return path_locations(resolve_path(self._raw_base(tool_input), ctx.cwd))

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return path_access(AccessKind.READ, self._raw_base(tool_input), ctx)


class BaseFileWriteTool(Tool):
    """A tool that changes the one file named by its ``path`` input."""

    def _locations(self, tool_input: JsonDict, ctx: ToolContext) -> list[JsonDict]:
        return path_locations(resolve_path(tool_input["path"], ctx.cwd))

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return path_access(AccessKind.WRITE, tool_input["path"], ctx)

    async def _preview(self, tool_input: JsonDict, ctx: ToolContext) -> list[JsonDict]:
        """The bounded ``diff`` the call would make, computed without writing anything.

        Not for a path outside the workspace or a sensitive one: its current content is not
        read before the user agreed (the title and the reason already name the path)."""
        access = path_access(AccessKind.WRITE, tool_input["path"], ctx)
        if access.restricted:
            return []
        path = resolve_path(tool_input["path"], ctx.cwd)
        if path.is_dir():
            return []
        try:
            current = await read_current_text(
                path, ctx, Path(access.real_paths[0]), ctx.limits.edit_max_bytes
            )
        except (NotEditable, UnsafePath):
            return []
        diff = await anyio.to_thread.run_sync(self._planned_diff, tool_input, path, current, ctx)
        return [] if diff is None else [diff.content]

    def _planned_diff(
        self, tool_input: JsonDict, path: Path, current: str | None, ctx: ToolContext
    ) -> BoundedDiff | None:
        """The diff from ``current`` (None: no such file) to what the call would write;
        None when the call would fail (run() then explains why)."""
        return None
