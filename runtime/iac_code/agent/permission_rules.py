"""Which remembered "always" answer applies to a tool, and under which key it is stored.

Built-in tools are keyed by their name. An MCP tool's model-facing name contains its
server's *label*, which depends on the order of the client's ``mcpServers`` list; keyed by
that, "always allow" for one server would silently cover another server that takes its
label in a later session. MCP tools therefore carry a ``permission_key`` made of the
server's identity (name, command, arguments) and the tool's own name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from iac_code.tools.contract import Tool
from iac_code.tools.permissions import PermissionMemory


def rule_key(tool: Tool) -> str:
    """The key a remembered answer for ``tool`` is stored under."""
    key = getattr(tool, "permission_key", None)
    return key if isinstance(key, str) and key else tool.name


def memory_for(tool: Tool, rules: Iterable[Any]) -> PermissionMemory:
    """The remembered answers that apply to ``tool``, looked up by its name as usual."""
    key = rule_key(tool)
    matching = [
        {**rule, "tool": tool.name}
        for rule in rules
        if isinstance(rule, Mapping) and rule.get("tool") == key
    ]
    return PermissionMemory.from_records(matching)
