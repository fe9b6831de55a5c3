"""Tool names the model sees for MCP tools: ``mcp__<server>__<tool>``.

The model API accepts tool names matching ``[A-Za-z0-9_-]{1,64}``, so both parts are
sanitised. Names must also be stable across processes, because remembered permission
answers (``allow_always`` / ``reject_always``) are keyed by tool name and persisted with the
session: a name that is cut to fit gets a short hash of the full name rather than a counter
that would depend on start-up order. Only genuine collisions get a numeric suffix.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection

MAX_TOOL_NAME = 64
TOOL_PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_CHARS = 6


def sanitise(part: str, fallback: str) -> str:
    """Replace every character outside ``[A-Za-z0-9_-]`` with ``_``."""
    cleaned = _UNSAFE.sub("_", part)
    return cleaned if cleaned.strip("_") else fallback


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_HASH_CHARS]


def _fit(name: str, limit: int, identity: str) -> str:
    """Cut ``name`` to ``limit`` characters, ending in a hash of ``identity`` when cut."""
    if len(name) <= limit:
        return name
    suffix = "_" + _short_hash(identity)
    return name[: limit - len(suffix)] + suffix


def _with_suffix(base: str, number: int, limit: int) -> str:
    suffix = f"_{number}"
    return base[: limit - len(suffix)] + suffix


def unique_server_label(server_name: str, taken: Collection[str]) -> str:
    """A safe label for a server, distinct from the labels in ``taken``.

    Kept to 24 characters so that the tool part of the name keeps most of the room.
    """
    base = _fit(sanitise(server_name, "server"), 24, server_name)
    label, number = base, 2
    while label in taken:
        label = _with_suffix(base, number, 24)
        number += 1
    return label


def unique_tool_name(server_label: str, tool_name: str, taken: Collection[str]) -> str:
    """``mcp__<server_label>__<tool>``, sanitised, at most 64 characters, not in ``taken``."""
    full = f"{TOOL_PREFIX}{server_label}__{sanitise(tool_name, 'tool')}"
    base = _fit(full, MAX_TOOL_NAME, f"{server_label}\0{tool_name}")
    name, number = base, 2
    while name in taken:
        name = _with_suffix(base, number, MAX_TOOL_NAME)
        number += 1
    return name
