"""Streamable HTTP transport requirements (``--url`` runs): what the endpoint answers to
requests it accepts, and the error bodies of those it refuses, judged from raw exchanges (see
:mod:`..harness.http_probe`).

The codes follow the ACP "Streamable HTTP & WebSocket" transport RFD and the official
TypeScript SDK's server, which defines them: 200 + ``Acp-Connection-Id`` for ``initialize``,
202 for every other accepted POST, 400 for a body that is not a JSON-RPC message. Then which
stream carries which message, SSE event ids, and resuming with ``Last-Event-ID`` without loss
or repeats. The plain refusals (one status code each) are the table of :mod:`.http_status`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from ..harness.http_probe import HttpProbe, StreamEvent, answers
from ..outcomes import Outcome, failed, passed
from ..scenarios.check_context import CheckContext
from .http_steps import (
    connected,
    connected_session,
    error_code,
    http_rule,
    new_session_request,
    prompt_answered,
    send_prompt,
    status_is,
    still_usable,
)


@http_rule("http.opening-post")
async def initialize_opens_connection(probe: HttpProbe, ctx: CheckContext) -> Outcome:
    first, connection = await probe.initialize()
    if bad := status_is(first, 200, "initialize"):
        return bad
    message = first.json_body()
    if not (isinstance(message, dict) and message.get("id") == 0 and "result" in message):
        return failed(f"the initialize body is not its JSON-RPC result: {first.describe()}")
    if not connection:
        return failed("the initialize response has no Acp-Connection-Id header")
    _, second = await probe.initialize()
    if second == connection:
        return failed(f"two initialize requests got the same connection id {connection!r}")
    return passed("initialize answered 200 with a fresh Acp-Connection-Id")


@http_rule("http.post-accepted")
async def post_accepted_and_answered_on_stream(probe: HttpProbe, ctx: CheckContext) -> Outcome:
    connection, stream = await connected(probe)
    exchange = await probe.post(new_session_request(7, str(ctx.work)), connection)
    if bad := status_is(exchange, 202, "session/new on a known connection"):
        return bad
    if await stream.wait_for(answers(7), ctx.timeout) is None:
        return failed("the answer to session/new never arrived on the connection stream")
    return passed("202, then the answer on the connection stream")


@http_rule("http.batch-rejected")
async def batch_rejected(probe: HttpProbe, ctx: CheckContext) -> Outcome:
    connection, _ = await connected(probe)
    batch = [new_session_request(4, str(ctx.work))]
    exchange = await probe.post(batch, connection)
    if bad := status_is(exchange, 400, "a JSON array body"):
        return bad
    if error_code(exchange.json_body()) != -32600:
        return failed(f"the 400 body is not a -32600 error: {exchange.describe()}")
    return passed("refused with 400 and -32600")


@http_rule("http.invalid-json")
async def invalid_json_refused(probe: HttpProbe, ctx: CheckContext) -> Outcome:
    connection, stream = await connected(probe)
    exchange = await probe.post(None, connection, raw=b'{"jsonrpc": "2.0", "id": 5, "meth')
    if bad := status_is(exchange, 400, "a body that is not JSON"):
        return bad
    answer = exchange.json_body()
    if answer is not None and error_code(answer) != -32700:
        return failed(f"the 400 body is JSON but not a -32700 error: {exchange.describe()}")
    if not await still_usable(probe, connection, stream, str(ctx.work)):
        return failed("after the bad body the connection no longer answers session/new")
    return passed("refused with 400; the connection stays usable")


def _answer_or_null(request_id: Any) -> Callable[[StreamEvent], bool]:
    def match(event: StreamEvent) -> bool:
        msg = event.message
        return isinstance(msg, dict) and "method" not in msg and msg.get("id") in (request_id, None)

    return match


@http_rule("http.invalid-message")
async def non_message_json_refused(probe: HttpProbe, ctx: CheckContext) -> Outcome:
    connection, stream = await connected(probe)
    problems = []
    for label, value, rid in (
        ("a number", 17, None),
        ("a string", "hello", None),
        ("an object whose method is a number", {"jsonrpc": "2.0", "id": 31, "method": 5}, 31),
        ("an object without jsonrpc", {"id": 32, "method": "session/list"}, 32),
    ):
        since = len(stream.events)
        exchange = await probe.post(value, connection)
        if exchange.status == 400:
            code = error_code(exchange.json_body())
            if code not in (None, -32600):
                problems.append(f"{label}: 400 with error {code}, not -32600")
            continue
        if exchange.status != 202:
            problems.append(f"{label}: {exchange.describe()}")
            continue
        event = await stream.wait_for(_answer_or_null(rid), ctx.timeout, since)
        if event is None or error_code(event.message) != -32600:
            problems.append(f"{label}: accepted with 202 but answered {event and event.data!r}")
    if problems:
        return failed("; ".join(problems))
    if not await still_usable(probe, connection, stream, str(ctx.work)):
        return failed("after the bad messages the connection no longer answers session/new")
    return passed("every non-message body was refused with 400 or answered -32600")


@http_rule("http.delete-ends-connection")
async def delete_ends_connection(probe: HttpProbe, ctx: CheckContext) -> Outcome:
    connection, stream = await connected(probe)
    exchange = await probe.delete(connection)
    if bad := status_is(exchange, 202, "DELETE of the connection"):
        return bad
    with anyio.move_on_after(ctx.timeout):
        await stream.ended.wait()
    if not stream.ended.is_set():
        return failed("the connection stream stayed open after DELETE")
    after = await probe.post(new_session_request(2, str(ctx.work)), connection)
    return status_is(after, 404, "a POST naming the deleted connection") or passed(
        "202, the stream ended, later POSTs get 404"
    )


@http_rule("http.stream-routing")
async def streams_carry_their_own_messages(probe: HttpProbe, ctx: CheckContext) -> Outcome:
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


@http_rule("http.sse-event-ids")
async def events_carry_ids(probe: HttpProbe, ctx: CheckContext) -> Outcome:
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


@http_rule("http.sse-resume")
async def resume_loses_nothing(probe: HttpProbe, ctx: CheckContext) -> Outcome:
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
