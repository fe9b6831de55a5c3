"""The tool set of a session and how it is described to the model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from iac_code.tools.agent_tool import AgentTool
from iac_code.tools.bash import BashTool
from iac_code.tools.contract import JsonDict, Tool
from iac_code.tools.edit_file import EditFileTool
from iac_code.tools.glob_files import GlobTool
from iac_code.tools.grep_search import GrepTool
from iac_code.tools.iac_check import IacCheckTool
from iac_code.tools.iac_plan import IacPlanTool
from iac_code.tools.list_files import ListFilesTool
from iac_code.tools.read_file import ReadFileTool
from iac_code.tools.update_plan import UpdatePlanTool
from iac_code.tools.web_fetch import WebFetchTool
from iac_code.tools.write_file import WriteFileTool


def default_tools(*, include_agent: bool = True) -> dict[str, Tool]:
    """Fresh instances of the tools, by name. ``include_agent=False`` is the sub-agents' set:
    no further sub-agents, and no ``update_plan`` (the plan belongs to the main conversation)."""
    tools: list[Tool] = [
        ReadFileTool(),
        ListFilesTool(),
        GlobTool(),
        GrepTool(),
        WriteFileTool(),
        EditFileTool(),
        BashTool(),
        WebFetchTool(),
        IacCheckTool(),
        IacPlanTool(),
    ]
    if include_agent:
        tools.append(AgentTool())
        tools.append(UpdatePlanTool())
    return {tool.name: tool for tool in tools}


def tool_specs_for_model(tools: Mapping[str, Tool] | Iterable[Tool]) -> list[JsonDict]:
    """``[{"name", "description", "input_schema"}]`` in a stable order (Anthropic tools)."""
    values = tools.values() if isinstance(tools, Mapping) else tools
    return [tool.spec() for tool in values]
