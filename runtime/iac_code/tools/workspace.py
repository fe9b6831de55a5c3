"""Helpers the file tools share: the Access of a path, and display paths."""

from __future__ import annotations

import os
from pathlib import Path

from iac_code.tools.base import Access, AccessKind, ToolContext
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
