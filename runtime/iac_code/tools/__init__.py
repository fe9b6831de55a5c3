"""Tools of the agent, the workspace path rules and the permission policy.

Entry points: :func:`iac_code.tools.registry.default_tools`,
:func:`iac_code.tools.permissions.decide`,
:func:`iac_code.tools.permissions.interpret_permission_response`, and the contracts in
:mod:`iac_code.tools.base` (``Tool``, ``ToolContext``, ``Access``, ``ToolOutcome``).
"""

from iac_code.tools.base import (
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
