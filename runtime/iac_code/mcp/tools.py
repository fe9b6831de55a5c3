"""MCP tools as :class:`~iac_code.tools.contract.Tool` objects next to the built-in ones.

Each MCP tool becomes its own small subclass of :class:`McpTool`, because the tool contract
keeps ``name``, ``kind``, ``description`` and ``input_schema`` on the class. Every call is an
EXECUTE access: the server is a program we do not control and its annotations are hints,
so the permission policy asks in ``default`` mode (``allow_always`` is remembered per tool
name) and refuses in ``read_only`` mode, whatever the server claims about the tool.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar, Protocol

from iac_code.mcp.client import (
    JsonDict,
    McpError,
    McpRequestError,
    McpTimeoutError,
    McpToolInfo,
)
from iac_code.mcp.content import outcome_from_result
from iac_code.mcp.naming import unique_tool_name
from iac_code.tools.contract import Access, AccessKind, Tool, ToolContext, ToolOutcome

DEFAULT_CALL_TIMEOUT_S = 600.0
MAX_DESCRIPTION_CHARS = 4_000


class ToolCaller(Protocol):
    """What an MCP tool needs from its server connection (an ``McpStdioClient``)."""

    async def call_tool(
        self, name: str, arguments: JsonDict, *, timeout_s: float | None = None
    ) -> JsonDict: ...


def object_schema(schema: JsonDict) -> JsonDict:
    """The MCP ``inputSchema`` as a model-API tool schema, which must describe an object."""
    declared = schema.get("type")
    if declared == "object":
        return schema
    if declared is None and schema:
        return {"type": "object", **schema}
    return {"type": "object"}


def _description(server_name: str, info: McpToolInfo) -> str:
    text = info.description.strip() or f"The tool {info.name!r}."
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[:MAX_DESCRIPTION_CHARS] + " [description truncated]"
    return f"[MCP server {server_name}] {text}"


class McpTool(Tool):
    """One tool of one MCP server; build instances with :func:`build_mcp_tool`."""

    kind: ClassVar[str] = "other"
    server_name: ClassVar[str]
    remote_name: ClassVar[str]
    display_title: ClassVar[str]
    #: Key of remembered permission answers: server identity + tool, never the label.
    permission_key: ClassVar[str]

    def __init__(self, caller: ToolCaller, *, call_timeout_s: float | None) -> None:
        self._caller = caller
        self._call_timeout_s = call_timeout_s

    def validate(self, tool_input: Any) -> str | None:
        """Check what our validator understands; the server checks the rest.

        Server schemas may use keywords or shapes the small built-in validator never
        expected; a failure there must not block the call.
        """
        if not isinstance(tool_input, dict):
            return f"Invalid input for {self.name}: the tool input must be an object."
        try:
            return super().validate(tool_input)
        except Exception:
            return None

    def _title(self, tool_input: JsonDict) -> str:
        return f"{self.server_name}: {self.display_title}"

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return Access(
            kind=AccessKind.EXECUTE,
            reasons=(f"runs {self.remote_name!r} on the MCP server {self.server_name!r}",),
        )

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        where = f"the MCP tool {self.remote_name!r} of server {self.server_name!r}"
        try:
            result = await self._caller.call_tool(
                self.remote_name, tool_input, timeout_s=self._call_timeout_s
            )
        except McpTimeoutError:
            return ToolOutcome.error(
                f"{where} did not answer within {self._call_timeout_s:g} s and was cancelled.",
                raw_output={"timeout": True},
            )
        except McpRequestError as exc:
            return ToolOutcome.error(
                f"{where} failed: {exc.message}",
                raw_output={"code": exc.code, "data": exc.data},
            )
        except McpError as exc:
            return ToolOutcome.error(f"{where} is not available: {exc}")
        return outcome_from_result(result, cap=ctx.limits.result_cap_chars)


def build_mcp_tool(
    server_name: str,
    server_label: str,
    info: McpToolInfo,
    caller: ToolCaller,
    *,
    taken: Collection[str] = (),
    call_timeout_s: float | None = DEFAULT_CALL_TIMEOUT_S,
    server_identity: str | None = None,
) -> McpTool:
    """An :class:`McpTool` for ``info``, named ``mcp__<server_label>__<tool>`` and distinct
    from every name in ``taken``.

    ``kind`` is ``read`` (and ``read_only`` True, so the loop may batch it with other reads)
    only when the server marks the tool ``readOnlyHint``; the access stays EXECUTE anyway.
    """
    name = unique_tool_name(server_label, info.name, taken)
    read_only = info.read_only_hint
    attributes: dict[str, Any] = {
        "name": name,
        "kind": "read" if read_only else "other",
        "read_only": read_only,
        "description": _description(server_name, info),
        "input_schema": object_schema(info.input_schema),
        "server_name": server_name,
        "remote_name": info.name,
        "display_title": info.title or info.name,
        "permission_key": f"mcp:{server_identity or server_name}:{info.name}",
        "__doc__": f"MCP tool {info.name!r} of server {server_name!r}.",
    }
    tool_class = type(f"McpTool_{name}", (McpTool,), attributes)
    tool: McpTool = tool_class(caller, call_timeout_s=call_timeout_s)
    return tool
