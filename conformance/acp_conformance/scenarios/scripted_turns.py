"""Whole prompt turns on the scripted model: the turn script (text, tool uses in the agent's
vocabulary, a final answer), running it on the scenario's turn agent and recording what the
agent sent (updates, tool calls, permission questions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..harness.agent_client import Response
from ..harness.client_side import ClientSide, PermissionMode
from ..outcomes import Outcome, failed, not_applicable
from ..vocabularies import ToolSpec
from ._expect import brief, session_updates
from .check_context import AgentRun, CheckContext, text_prompt

USER_PROMPT = "Please do the scripted task."


FINAL_TEXT = "All done."


@dataclass
class TurnRecord:
    run: AgentRun
    session_id: str
    response: Response
    client: ClientSide
    #: (seq, update) for every session/update of this session during the turn.
    updates: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    #: Index of this turn's first call in ``client.calls`` (the client serves many turns).
    calls_from: int = 0

    def of_kind(self, kind: str) -> list[tuple[int, dict[str, Any]]]:
        return [(seq, u) for seq, u in self.updates if u.get("sessionUpdate") == kind]

    def text_of(self, kind: str) -> str:
        out = []
        for _, update in self.of_kind(kind):
            content = update.get("content")
            if isinstance(content, dict) and isinstance(content.get("text"), str):
                out.append(content["text"])
        return "".join(out)

    def tool_call_ids(self) -> list[str]:
        ids = []
        for _, update in self.of_kind("tool_call"):
            if isinstance(update.get("toolCallId"), str) and update["toolCallId"] not in ids:
                ids.append(update["toolCallId"])
        return ids

    def permission_requests(self) -> list[tuple[int, dict[str, Any]]]:
        out = []
        for frame in self.run.frames[self.response.request.seq : self.response.frame.seq]:
            msg = frame.message
            if (
                frame.direction == "a2c"
                and isinstance(msg, dict)
                and msg.get("method") == "session/request_permission"
            ):
                out.append((frame.seq, msg.get("params") or {}))
        return out

    def client_calls(self, prefix: str) -> list[str]:
        calls = self.client.calls[self.calls_from :]
        return [c.method for c in calls if c.method.startswith(prefix)]


def scripted_tool(ctx: CheckContext, kind: Literal["write", "shell"]) -> ToolSpec | Outcome:
    """The agent's ``kind`` tool in its vocabulary (``--tools``), or why a check that scripts
    a use of it is not applicable."""
    spec: ToolSpec | None = getattr(ctx.tools, kind)
    if spec is None:
        return not_applicable(f"tool vocabulary {ctx.tools.name!r} has no {kind} tool")
    return spec


def tool_turn(spec: ToolSpec, *args: str) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": spec.name, "input": spec.build(*args)}]}


def final_turn() -> dict[str, Any]:
    return {"content": [{"type": "text", "text": FINAL_TEXT}]}


async def run_turn(
    ctx: CheckContext,
    script: list[Any],
    *,
    permission: PermissionMode = "allow",
    prompt: str = USER_PROMPT,
) -> TurnRecord:
    run = await ctx.turn_agent(permission=permission, llm_script=script)
    session_id = await ctx.new_session(run)
    calls_from = len(run.client.calls)
    response = await run.live.request(
        "session/prompt", text_prompt(session_id, prompt), timeout=ctx.timeout * 3
    )
    record = TurnRecord(run, session_id, response, run.client, calls_from=calls_from)
    record.updates = session_updates(run, session_id, response.request.seq, response.frame.seq)
    return record


def turn_failed(record: TurnRecord) -> Outcome | None:
    if record.response.is_error:
        return failed(
            f"the prompt failed: {brief(record.response.frame)}", frames=[record.response.frame.seq]
        )
    return None


async def allowed_write(ctx: CheckContext) -> TurnRecord | Outcome:
    """One turn that writes allowed.txt with permission "allow" (memoised)."""
    found = await ctx.once("allowed-write", _write_allowed)
    if isinstance(found, TurnRecord):
        ctx.current = found.run
    return found


async def _write_allowed(ctx: CheckContext) -> TurnRecord | Outcome:
    spec = scripted_tool(ctx, "write")
    if isinstance(spec, Outcome):
        return spec
    return await run_turn(
        ctx, [tool_turn(spec, str(ctx.work / "allowed.txt"), "allowed\n"), final_turn()]
    )


async def allowed_write_with_a_tool_call(ctx: CheckContext) -> TurnRecord | Outcome:
    """The allowed write turn (:func:`allowed_write`), or the outcome that ends a check built
    on its tool call: not applicable without a write tool or a tool call, failed when the
    prompt failed."""
    record = await allowed_write(ctx)
    if isinstance(record, Outcome):
        return record
    return turn_failed(record) or no_tool_call(record) or record


async def tool_calling_turn(
    ctx: CheckContext,
    tool: Literal["write", "shell"],
    *uses: tuple[str, ...],
    permission: PermissionMode = "allow",
) -> TurnRecord | Outcome:
    """A turn whose scripted model uses the agent's ``tool`` once per entry of ``uses`` (its
    arguments) and then answers (:func:`run_turn`), or the outcome that ends a check built on
    its tool calls: not applicable without such a tool or a tool call, failed when the prompt
    failed."""
    spec = scripted_tool(ctx, tool)
    if isinstance(spec, Outcome):
        return spec
    script = [*(tool_turn(spec, *args) for args in uses), final_turn()]
    record = await run_turn(ctx, script, permission=permission)
    return turn_failed(record) or no_tool_call(record) or record


def no_tool_call(record: TurnRecord) -> Outcome | None:
    if not record.tool_call_ids():
        return not_applicable(
            "the agent produced no tool_call for the scripted tool use "
            "(does --tools fit this agent?)"
        )
    return None
