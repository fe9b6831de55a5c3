"""The ``mcpServers`` entries of ``session/new`` (and load/resume/fork), as plain data.

ACP describes three transports; we advertise ``mcpCapabilities {http: false, sse: false}``,
so only the stdio variant is started. Entries of another transport, or malformed ones, are
reported (never raised): a bad MCP entry must not fail the session it came with.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from iac_code.mcp.naming import unique_server_label

UNSUPPORTED_TRANSPORTS = ("http", "sse")


@dataclass(frozen=True)
class StdioServerConfig:
    """One MCP server to start as a local process.

    ``name`` is what the client called it (shown in titles and logs); ``label`` is that name
    made safe and unique within the session, used to build tool names.
    """

    name: str
    label: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    @property
    def identity(self) -> str:
        """What the server *is*, independent of its position in the client's list.

        Labels depend on order (two servers called ``fs`` become ``fs`` and ``fs_2``), so
        remembered permission answers are keyed by this instead: the name the client gave,
        the command and its arguments (``npx a`` and ``npx b`` are different servers).
        """
        spelled = json.dumps([self.name, self.command, list(self.args)], ensure_ascii=False)
        return hashlib.sha256(spelled.encode("utf-8")).hexdigest()[:16]


def _as_mapping(entry: Any) -> Mapping[str, Any] | None:
    """Accept wire dicts and, for convenience, the generated pydantic models."""
    if isinstance(entry, Mapping):
        return entry
    dump = getattr(entry, "model_dump", None)
    if callable(dump):
        dumped = dump(by_alias=True, exclude_unset=True, mode="json")
        if isinstance(dumped, Mapping):
            return dumped
    return None


def _env_pairs(raw: Any) -> tuple[tuple[str, str], ...] | str:
    """ACP env is ``[{"name", "value"}]``; returns the pairs or why they are unusable."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        return "env must be a list"
    pairs = []
    for item in raw:
        if not isinstance(item, Mapping):
            return "env entries must be objects"
        name, value = item.get("name"), item.get("value")
        if not isinstance(name, str) or not name or "=" in name or not isinstance(value, str):
            return f"invalid env entry {item!r}"
        pairs.append((name, value))
    return tuple(pairs)


def _parse_one(entry: Mapping[str, Any]) -> tuple[str, str, tuple[str, ...], Any] | str:
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        return "it has no name"
    transport = entry.get("type")
    if transport in UNSUPPORTED_TRANSPORTS:
        return f"the {transport} transport is not supported (only stdio)"
    if transport not in (None, "stdio"):
        return f"unknown transport {transport!r}"
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        return "it has no command"
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        return "args must be a list of strings"
    env = _env_pairs(entry.get("env"))
    if isinstance(env, str):
        return env
    return name, command, tuple(args), env


def parse_server_configs(
    servers: Iterable[Any] | None, logger: logging.Logger
) -> list[StdioServerConfig]:
    """The stdio servers among ``servers``, in order; every skipped entry is logged."""
    configs: list[StdioServerConfig] = []
    labels: set[str] = set()
    for index, raw in enumerate(servers or ()):
        entry = _as_mapping(raw)
        parsed: tuple[str, str, tuple[str, ...], Any] | str
        parsed = "it is not an object" if entry is None else _parse_one(entry)
        if isinstance(parsed, str):
            shown = entry.get("name") if entry is not None else None
            logger.warning("MCP server #%d (%r) skipped: %s", index, shown, parsed)
            continue
        name, command, args, env = parsed
        label = unique_server_label(name, labels)
        labels.add(label)
        configs.append(StdioServerConfig(name, label, command, args, env))
    return configs
