"""Hostile input: huge lines and bytes that are not UTF-8."""

from __future__ import annotations

from ..harness.agent_client import AgentExited, AgentTimeout
from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ._expect import brief
from .check_context import AgentRun, CheckContext, scenario

ROBUSTNESS = scenario("robustness", "oversized and non-UTF-8 lines")

OVERSIZED_BYTES = 2 * 1024 * 1024


async def _still_usable(ctx: CheckContext, run: AgentRun, what: str) -> Outcome:
    try:
        response = await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    except AgentExited:
        return failed(f"the agent exited after {what}")
    except AgentTimeout:
        return failed(f"the agent stopped answering after {what}")
    if response.is_error:
        return failed(
            f"session/new failed after {what}: {brief(response.frame)}", frames=[response.frame.seq]
        )
    return passed(f"still usable after {what}", frames=[response.frame.seq])


@check("robustness.oversized-line", scenario=ROBUSTNESS)
async def oversized_line_is_survived(ctx: CheckContext) -> Outcome:
    run = await ctx.spawn()
    garbage = (
        b'{"jsonrpc":"2.0","id":"big","method":"_x","params":{"pad":"'
        + b"x" * OVERSIZED_BYTES
        + b'"'
    )
    await run.live.send_line(garbage, deliberate=True)
    return await _still_usable(ctx, run, f"a {len(garbage)}-byte invalid line")


@check("robustness.invalid-utf8", scenario=ROBUSTNESS)
async def invalid_utf8_is_survived(ctx: CheckContext) -> Outcome:
    run = await ctx.spawn()
    await run.live.send_line(b'{"jsonrpc":"2.0","id":77,"method":"\xff\xfe"}', deliberate=True)
    return await _still_usable(ctx, run, "a line with invalid UTF-8")
