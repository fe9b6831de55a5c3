"""MCP servers the ACP client asks for, and their tools offered to the model.

* :mod:`~iac_code.mcp.config` — ACP ``mcpServers`` entries → :class:`StdioServerConfig`.
* :mod:`~iac_code.mcp.client` — :class:`McpStdioClient`, one server over stdio.
* :mod:`~iac_code.mcp.tools` — :class:`McpTool`, one MCP tool as an agent tool.
* :mod:`~iac_code.mcp.manager` — :class:`McpSessionServers`, a session's servers.
"""

from iac_code.mcp.client import (
    McpConnectionClosed,
    McpError,
    McpRequestError,
    McpStartError,
    McpStdioClient,
    McpTimeoutError,
    McpToolInfo,
)
from iac_code.mcp.config import StdioServerConfig, parse_server_configs
from iac_code.mcp.manager import McpSessionServers, ServerStatus
from iac_code.mcp.tools import McpTool, build_mcp_tool

__all__ = [
    "McpConnectionClosed",
    "McpError",
    "McpRequestError",
    "McpSessionServers",
    "McpStartError",
    "McpStdioClient",
    "McpTimeoutError",
    "McpTool",
    "McpToolInfo",
    "ServerStatus",
    "StdioServerConfig",
    "build_mcp_tool",
    "parse_server_configs",
]
