"""Tools of the agent, the workspace path rules and the permission policy.

Entry points: :func:`iac_code.tools.registry.default_tools`,
:func:`iac_code.tools.permissions.decide`,
:func:`iac_code.tools.permissions.interpret_permission_response`, and the contracts in
:mod:`iac_code.tools.contract` (``Tool``, ``ToolContext``, ``Access``, ``ToolOutcome``).

The names below are imported lazily (PEP 562): the search worker process imports one
stdlib-only module of this package, and must not pay for anyio and every tool on start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Access": "iac_code.tools.contract",
    "AccessKind": "iac_code.tools.contract",
    "ClientFileReader": "iac_code.tools.contract",
    "ClientFileWriter": "iac_code.tools.contract",
    "ClientTerminals": "iac_code.tools.contract",
    "Tool": "iac_code.tools.contract",
    "ToolContext": "iac_code.tools.contract",
    "ToolLimits": "iac_code.tools.contract",
    "ToolOutcome": "iac_code.tools.contract",
    "PERMISSION_OPTIONS": "iac_code.tools.permissions",
    "Decision": "iac_code.tools.permissions",
    "PermissionMemory": "iac_code.tools.permissions",
    "Verdict": "iac_code.tools.permissions",
    "decide": "iac_code.tools.permissions",
    "declined_outcome": "iac_code.tools.permissions",
    "interpret_permission_response": "iac_code.tools.permissions",
    "default_tools": "iac_code.tools.registry",
    "tool_specs_for_model": "iac_code.tools.registry",
}

__all__ = [
    "PERMISSION_OPTIONS",
    "Access",
    "AccessKind",
    "ClientFileReader",
    "ClientFileWriter",
    "ClientTerminals",
    "Decision",
    "PermissionMemory",
    "Tool",
    "ToolContext",
    "ToolLimits",
    "ToolOutcome",
    "Verdict",
    "decide",
    "declined_outcome",
    "default_tools",
    "interpret_permission_response",
    "tool_specs_for_model",
]

if TYPE_CHECKING:
    from iac_code.tools.contract import (
        Access,
        AccessKind,
        ClientFileReader,
        ClientFileWriter,
        ClientTerminals,
        Tool,
        ToolContext,
        ToolLimits,
        ToolOutcome,
    )
    from iac_code.tools.permissions import (
        PERMISSION_OPTIONS,
        Decision,
        PermissionMemory,
        Verdict,
        decide,
        declined_outcome,
        interpret_permission_response,
    )
    from iac_code.tools.registry import default_tools, tool_specs_for_model


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
