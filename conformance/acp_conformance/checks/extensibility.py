"""ext.*: extensibility — custom (``_``-prefixed) requests answered, unknown notifications
ignored, ``_meta`` accepted (also as null or ``{}``)."""

from __future__ import annotations

import json
from typing import Any

from ..harness.agent_client import (
    AgentExited,
    AgentTimeout,
    id_key,
)
from ..outcomes import NO_DEADLINE, Outcome, failed, passed, soft_failed
from ..requirements import check
from ..scenarios._expect import brief, expect_error, expect_result
from ..scenarios.catalog import ENVELOPE
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.quiet_probes import silence_until_barrier


@check("ext.unknown-notification-ignored", scenario=ENVELOPE)
async def unknown_extension_notification_is_ignored(ctx: CheckContext) -> Outcome:
    return await silence_until_barrier(ctx, "_acp_conformance/notice", {"hello": "world"})


@check("ext.unknown-request", scenario=ENVELOPE)
async def unknown_extension_request_gets_method_not_found(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request("_acp_conformance/unknown", {"x": 1})
    return expect_error(response, (-32601,), "an unknown _ request")


@check("ext.meta-accepted", scenario=ENVELOPE)
async def meta_fields_are_accepted(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    meta = {"acp-conformance": {"probe": True}}
    response = await run.live.request(
        "session/new", {"cwd": str(ctx.work), "mcpServers": [], "_meta": meta}
    )
    if (bad := expect_result(response, "session/new with _meta")) is not None:
        return bad
    return passed("session/new with _meta accepted", frames=[response.frame.seq])


@check("ext.null-and-empty-tolerated", scenario=ENVELOPE)
async def null_and_empty_meta_are_accepted_alike(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    frames = []
    metas: tuple[dict[str, object] | None, ...] = (None, {})
    for meta in metas:
        params: dict[str, object] = {"cwd": str(ctx.work), "mcpServers": [], "_meta": meta}
        response = await run.live.request("session/new", params)
        frames.append(response.frame.seq)
        if response.is_error:
            return failed(
                f"session/new with _meta {json.dumps(meta)} failed: {brief(response.frame)}",
                frames=frames,
            )
    return passed("session/new accepts _meta null and _meta {}", frames=frames)


#: A custom method no agent implements (the barrier's own method is answered by some agents
#: that answer nothing else, so it is not used here).
CUSTOM_PROBE = "_acp_conformance/custom-probe"


@check("ext.custom-request-answered", scenario=ENVELOPE)
async def custom_request_is_answered(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    later = {"cwd": str(ctx.work), "mcpServers": []}
    return await judge_custom_request(run, f"the custom request {CUSTOM_PROBE}", later)


async def judge_custom_request(run: AgentRun, what: str, later: dict[str, Any]) -> Outcome:
    """Send :data:`CUSTOM_PROBE` to ``run``: any answer passes (v1 and v2 alike). ``later`` is
    the session/new a silence is judged by (see :func:`_unanswered`)."""
    pending = await run.live.start_request(CUSTOM_PROBE, {"probe": True})
    try:
        response = await pending.wait()
    except AgentTimeout as exc:
        return await _unanswered(run, pending.request.seq, str(exc), what, later)
    kind = f"error {response.error_code}" if response.is_error else "a result"
    return passed(
        f"{what} was answered with {kind}", frames=[pending.request.seq, response.frame.seq]
    )


async def _unanswered(
    run: AgentRun, sent: int, why: str, what: str, later_params: dict[str, Any]
) -> Outcome:
    """No answer in time: a MUST failure only when the agent answers a request sent after it
    (it ignores custom requests); if it answers nothing, the agent is merely slow or stuck,
    which the spec sets no deadline for."""
    request = run.frames[sent].message
    try:
        later = await run.live.request("session/new", later_params)
    except (AgentTimeout, AgentExited) as exc:
        return soft_failed(
            f"{why}; a later session/new was not answered either ({exc})",
            NO_DEADLINE,
            frames=[sent],
        )
    answered = any(
        f.direction == "a2c"
        and isinstance(f.message, dict)
        and "method" not in f.message
        and id_key(f.message.get("id")) == id_key(request["id"])
        for f in run.frames[sent:]
    )
    if answered:
        return soft_failed(f"{why}; it was answered later", NO_DEADLINE, frames=[sent])
    return failed(
        f"{what} (id {request['id']!r}) was never answered, although session/new sent after "
        f"it was (#{later.frame.seq}): custom requests must get a response",
        frames=[sent, later.request.seq, later.frame.seq],
    )
