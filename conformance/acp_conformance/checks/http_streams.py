"""Streamable HTTP stream requirements (``--url`` runs): which stream carries which message,
event ids, and resuming with ``Last-Event-ID`` without loss or repeats.
"""

from __future__ import annotations

import anyio

from ..harness.http_probe import HttpProbe, answers
from ..outcomes import Outcome, failed, passed
from ..requirements import Tier, requirement
from ..scenarios.catalog import HTTP
from ..scenarios.check_context import CheckContext
from .http_steps import (
    RFD,
    SDK_HOUSE_RULE,
    connected_session,
    prompt_answered,
    send_prompt,
    status_is,
    with_probe,
)


@requirement(
    "http.stream-routing",
    Tier.MUST,
    "Connection-level answers arrive on the connection stream; a "
    "session's updates and prompt answers on that session's stream only.",
    SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def streams_carry_their_own_messages(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, conn_stream, session = await connected_session(probe, str(ctx.work))
        session_stream = await probe.open_stream(connection, session)
        if session_stream.status != 200:
            return failed(f"GET with Acp-Session-Id {session!r} got HTTP {session_stream.status}")
        exchange = await send_prompt(probe, connection, session, 9, "say hello")
        if bad := status_is(exchange, 202, "session/prompt with its session header"):
            return bad
        if await session_stream.wait_for(answers(9), ctx.timeout * 3) is None:
            where = "connection" if any(answers(9)(e) for e in conn_stream.events) else "no"
            return failed(f"the prompt's answer arrived on the {where} stream, not the session's")
        strays = [
            e.data[:160]
            for e in conn_stream.events
            if isinstance(e.message, dict)
            and isinstance(e.message.get("params"), dict)
            and e.message["params"].get("sessionId") == session
        ]
        if strays:
            return failed(f"session messages on the connection stream: {strays[:3]}")
        return passed(
            "session/new answered on the connection stream; the prompt's "
            f"{len(session_stream.events)} events on the session stream"
        )

    return await with_probe(ctx, body)


@requirement(
    "http.sse-event-ids",
    Tier.SHOULD,
    "Every SSE event carries an id, so a client can resume.",
    RFD,
    scenario=HTTP,
)
async def events_carry_ids(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, conn_stream, session = await connected_session(probe, str(ctx.work))
        reader = await probe.open_stream(connection, session)
        await prompt_answered(probe, connection, session, reader, 20)
        events = conn_stream.events + reader.events
        missing = [e.data[:100] for e in events if not e.event_id]
        if not events:
            return failed("no events arrived to judge")
        if missing:
            return failed(f"{len(missing)} of {len(events)} events have no id, e.g. {missing[0]}")
        return passed(f"all {len(events)} events carry an id")

    return await with_probe(ctx, body)


@requirement(
    "http.sse-resume",
    Tier.SHOULD,
    "A client reconnecting with Last-Event-ID receives every event it "
    "missed, and none it had already received.",
    RFD,
    scenario=HTTP,
)
async def resume_loses_nothing(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, _, session = await connected_session(probe, str(ctx.work))
        first = await probe.open_stream(connection, session)
        if not await prompt_answered(probe, connection, session, first, 30):
            return failed("the first prompt was not answered on the session stream")
        last_id = first.events[-1].event_id if first.events else None
        if not last_id:
            return failed("the session stream's events carry no id to resume from")
        first.close()
        with anyio.move_on_after(ctx.timeout):
            await first.ended.wait()
        # While nobody reads the session stream, a second turn happens.
        await send_prompt(probe, connection, session, 31, "while away")
        resumed = await probe.open_stream(connection, session, last_event_id=last_id)
        if resumed.status != 200:
            return failed(f"the reconnect with Last-Event-ID got HTTP {resumed.status}")
        if await resumed.wait_for(answers(31), ctx.timeout * 3) is None:
            return failed("the answer sent while disconnected never arrived after resuming")
        seen = {e.data for e in first.events}
        repeated = [e.data[:100] for e in resumed.events if e.data in seen]
        if repeated:
            return failed(f"events received before the drop were sent again: {repeated[:2]}")
        ids = [e.event_id for e in resumed.events]
        return passed(f"resumed after id {last_id}: {len(ids)} missed events, none repeated")

    return await with_probe(ctx, body)
