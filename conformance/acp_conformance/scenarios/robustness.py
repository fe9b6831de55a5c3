"""Hostile input: huge lines and bytes that are not UTF-8."""

from __future__ import annotations

from ..citations import STDIO, acp, house
from ..harness.agent_client import AgentExited, AgentTimeout
from ..outcomes import Outcome, failed, passed
from ..requirements import Tier, requirement
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


@requirement(
    "robustness.oversized-line",
    Tier.SHOULD,
    "A 2 MiB line of garbage is rejected or ignored and the agent stays usable.",
    house("oversized lines", STDIO),
    scenario=ROBUSTNESS,
    house=True,
)
async def oversized_line_is_survived(ctx: CheckContext) -> Outcome:
    run = await ctx.spawn()
    garbage = (
        b'{"jsonrpc":"2.0","id":"big","method":"_x","params":{"pad":"'
        + b"x" * OVERSIZED_BYTES
        + b'"'
    )
    await run.live.send_line(garbage, deliberate=True)
    return await _still_usable(ctx, run, f"a {len(garbage)}-byte invalid line")


@requirement(
    "robustness.invalid-utf8",
    Tier.SHOULD,
    "A line that is not UTF-8 is rejected or ignored and the agent stays usable.",
    house("non-UTF-8 lines", acp("transports", "Transports")),
    scenario=ROBUSTNESS,
    house=True,
)
async def invalid_utf8_is_survived(ctx: CheckContext) -> Outcome:
    run = await ctx.spawn()
    await run.live.send_line(b'{"jsonrpc":"2.0","id":77,"method":"\xff\xfe"}', deliberate=True)
    return await _still_usable(ctx, run, "a line with invalid UTF-8")
