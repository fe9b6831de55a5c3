"""``update_plan``: the model keeps a visible plan of the task (ACP ``plan`` updates).

Each call replaces the whole plan, as an ACP plan update does. It touches nothing, so it
runs without asking; the agent loop sends and persists the plan through
``ToolContext.report_plan``.
"""

from __future__ import annotations

from iac_code.tools.contract import Access, AccessKind, JsonDict, Tool, ToolContext, ToolOutcome

_STATUSES = ["pending", "in_progress", "completed"]
_PRIORITIES = ["high", "medium", "low"]


class UpdatePlanTool(Tool):
    name = "update_plan"
    kind = "think"
    read_only = True
    description = (
        "Show the user your plan for a multi-step task and keep it current: send the complete"
        " list of steps each time, marking the one you are on as in_progress and finished ones"
        " as completed. Use it for work with three or more steps; skip it for quick answers."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "entries": {
                "type": "array",
                "description": "Every step of the plan, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1, "description": "The step."},
                        "status": {
                            "type": "string",
                            "enum": _STATUSES,
                            "description": "pending, in_progress (one at a time) or completed.",
                        },
                        "priority": {
                            "type": "string",
                            "enum": _PRIORITIES,
                            "description": "How much the step matters.",
                        },
                    },
                    "required": ["content", "status", "priority"],
                },
            }
        },
        "required": ["entries"],
    }

    def _title(self, tool_input: JsonDict) -> str:
        return "Update plan"

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return Access(kind=AccessKind.READ)

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        if ctx.report_plan is None:
            return ToolOutcome.error("Plans are not available in this session.")
        entries = [
            {"content": e["content"], "status": e["status"], "priority": e["priority"]}
            for e in tool_input["entries"]
        ]
        await ctx.report_plan(entries)
        done = sum(1 for e in entries if e["status"] == "completed")
        return ToolOutcome(
            model_content=f"Plan updated: {len(entries)} steps, {done} completed.",
            raw_output={"entries": len(entries), "completed": done},
        )
