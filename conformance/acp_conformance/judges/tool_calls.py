"""Tool call updates name a tool call the agent announced (issue 36, item 4)."""

from __future__ import annotations

from collections.abc import Iterator

from ..citations import acp
from ..outcomes import Outcome
from ..requirements import RUN_WIDE, Tier, requirement
from ..scenarios.check_context import AgentRun, RunRecord
from ..versions import negotiated_version
from .wire import Offence, per_run


def _unknown_tool_updates(run: AgentRun) -> Iterator[Offence]:
    if negotiated_version(run) >= 2:
        return  # v2 keys its updates differently (version.v2-tool-call-ids)
    announced: dict[object, set[object]] = {}  # session → toolCallIds its tool_call updates named
    for frame in run.frames:
        msg = frame.message
        if frame.direction != "a2c" or not isinstance(msg, dict):
            continue
        if msg.get("method") != "session/update" or not isinstance(msg.get("params"), dict):
            continue
        session = msg["params"].get("sessionId")
        update = msg["params"].get("update")
        if not isinstance(update, dict):
            continue
        kind, tool_id = update.get("sessionUpdate"), update.get("toolCallId")
        known = announced.setdefault(session, set())
        if kind == "tool_call":
            known.add(tool_id)
        elif kind == "tool_call_update" and tool_id not in known:
            yield (
                frame,
                f"tool_call_update for toolCallId {tool_id!r}, which no tool_call of session "
                f"{session!r} announced",
            )


@requirement(
    "prompt.tool-update-known-id",
    Tier.SHOULD,
    "A tool_call_update names a toolCallId that a tool_call of the same session announced.",
    acp("tool-calls", "Updating"),
    scenario=RUN_WIDE,
)
def tool_updates_name_announced_calls(record: RunRecord) -> list[Outcome]:
    return per_run(record, _unknown_tool_updates, "updates of unannounced tool calls")
