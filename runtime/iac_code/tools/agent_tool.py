"""``agent``: hand a self-contained task to a sub-agent and return its final report.

The sub-agent loop itself belongs to the agent package; it arrives here as
``ToolContext.run_subagent``. Its own tool calls are permission-checked and reported there.
"""

from __future__ import annotations

from iac_code.tools.contract import (
    Access,
    AccessKind,
    JsonDict,
    Tool,
    ToolContext,
    ToolOutcome,
    text_content,
)


class AgentTool(Tool):
    name = "agent"
    kind = "execute"
    description = (
        "Start a sub-agent with its own context to carry out a self-contained task (for "
        "example: survey every module's variables, or find where a resource is defined) and "
        "return its final report. The sub-agent has the same tools and permissions but not "
        "this conversation, so `task` must say everything it needs to know and what to "
        "report back."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "task": {
                "type": "string",
                "minLength": 1,
                "description": "Complete instructions for the sub-agent, including the "
                "expected result.",
            },
            "description": {
                "type": "string",
                "minLength": 1,
                "description": "A short (3-6 word) summary shown to the user.",
            },
        },
        "required": ["task", "description"],
    }

    def _title(self, tool_input: JsonDict) -> str:
        return f"Agent: {tool_input['description']}"

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return Access(kind=AccessKind.EXECUTE)

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        if ctx.run_subagent is None:
            return ToolOutcome.error("Sub-agents are not available in this session.")
        try:
            report = await ctx.run_subagent(tool_input["task"], tool_input["description"])
        except Exception as exc:
            return ToolOutcome.error(f"The sub-agent failed: {exc}")
        text = report if report.strip() else "(the sub-agent returned no report)"
        return ToolOutcome(
            model_content=text,
            content=[text_content(text)],
            raw_output={"description": tool_input["description"], "reportChars": len(report)},
        )
