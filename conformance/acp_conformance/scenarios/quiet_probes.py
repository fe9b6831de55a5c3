"""Probes that expect silence: send something the agent must not answer (a notification, a
cancel for an unknown request) and prove, with a barrier request, that no answer came."""

from __future__ import annotations

import anyio

from ..harness.agent_client import BARRIER_METHOD, id_key, id_text
from ..harness.recorder import Frame
from ..outcomes import Outcome, failed, passed
from ._expect import brief
from .check_context import CheckContext

#: How long a probe that expects no answer listens for one when the agent does not answer
#: the barrier (an agent that ignores unknown ``_`` requests): a short quiet period, not the
#: full ``--timeout``.
QUIET_PERIOD = 0.5


def _is_response(frame: Frame) -> bool:
    return isinstance(frame.message, dict) and "method" not in frame.message


async def silence_until_barrier(
    ctx: CheckContext, method: str, params: dict[str, object]
) -> Outcome:
    """Send a notification and check that nothing answers it: up to the barrier's answer
    when the agent answers the barrier at once, else for a quiet period."""
    run = await ctx.agent()
    conn = run.live
    start = len(conn.recorder.frames)
    sent = await conn.notify(method, params)
    barrier = await conn.start_request(BARRIER_METHOD, {})
    with anyio.move_on_after(QUIET_PERIOD):
        await barrier.arrived.wait()
    end = barrier.response.frame.seq if barrier.response is not None else len(conn.recorder.frames)
    # Late answers to the checker's own earlier requests (a slow barrier) are not strays.
    # So are answers to them whose id changed type (1 came back as "1"): that defect is
    # jsonrpc.id-echo's, and answering it here would charge it to the notification.
    sent_ids = [
        f.message["id"]
        for f in conn.recorder.frames
        if f.direction == "c2a"
        and isinstance(f.message, dict)
        and "method" in f.message
        and "id" in f.message
    ]
    own = {id_key(rid) for rid in sent_ids} | {id_text(rid) for rid in sent_ids} - {None}
    stray = [
        f
        for f in conn.agent_frames(start)
        if f.seq < end
        and _is_response(f)
        and id_key(f.message.get("id")) not in own
        and id_text(f.message.get("id")) not in own
    ]
    if stray:
        return failed(
            f"the notification {method} was answered: {brief(stray[0])}",
            frames=[sent.seq, stray[0].seq],
        )
    if not conn.alive:
        return failed(f"the agent exited after {method}", frames=[sent.seq])
    listened = (
        "until the barrier's answer" if barrier.response is not None else f"for {QUIET_PERIOD:g} s"
    )
    return passed(f"{method} got no answer ({listened}) and the agent stayed up", frames=[sent.seq])
