"""Streamable HTTP transport requirements (``--url`` runs): status codes, headers, stream
routing and SSE resume, judged from raw exchanges (see :mod:`..harness.http_probe`).

The status codes follow the ACP "Streamable HTTP & WebSocket" transport and the official
TypeScript SDK's server, which defines them: 200 + ``Acp-Connection-Id`` for ``initialize``,
202 for every other accepted POST, 400 missing / 404 unknown connection id, 415 wrong content
type, 406 a GET that does not accept an event stream, 409 a second reader of one stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ..citations import REMOTE_TRANSPORT, house
from ..harness.http_probe import Exchange, HttpProbe, SseReader, StreamEvent, answers, rpc
from ..outcomes import Outcome, failed, not_applicable, passed
from ..requirements import Tier, requirement
from ..scenarios.catalog import HTTP
from ..scenarios.check_context import CheckContext, SetupError
from ..scenarios.remote_endpoint import endpoint

_RFD = REMOTE_TRANSPORT


#: The SDK's behaviour where the RFD states no MUST: a house rule that blocks under iac-code.
_SDK_RULE = "the remote transport answers as the official TypeScript SDK's AcpServer does"


_SDK_HOUSE_RULE = house(_SDK_RULE, _RFD)


def _rfd_must(words: str) -> str:
    """The RFD's citation with the words (shortened) in which it states the rule as a MUST."""
    return f'{_RFD}: "{words}"'


async def _with_probe(
    ctx: CheckContext, body: Callable[[HttpProbe], Awaitable[Outcome]]
) -> Outcome:
    """Run ``body`` with a fresh probe; every exchange goes into the outcome's evidence."""
    target = await endpoint(ctx)
    async with anyio.create_task_group() as tg:
        probe = HttpProbe(target, tg, timeout=ctx.timeout)
        try:
            outcome = await body(probe)
        finally:
            tg.cancel_scope.cancel()
            await probe.aclose()
    outcome.evidence.setdefault("exchanges", probe.evidence())
    return outcome


async def _connected(probe: HttpProbe) -> tuple[str, SseReader]:
    """An initialized connection with its stream open (a harness step: errors are setup errors)."""
    exchange, connection = await probe.initialize()
    if exchange.status != 200 or not connection:
        raise SetupError(f"initialize over HTTP failed: {exchange.describe()}")
    stream = await probe.open_stream(connection)
    if stream.status != 200:
        raise SetupError(f"the connection stream could not be opened (HTTP {stream.status})")
    return connection, stream


async def _new_session(probe: HttpProbe, connection: str, stream: SseReader, cwd: str) -> str:
    exchange = await probe.post(rpc(1, "session/new", {"cwd": cwd, "mcpServers": []}), connection)
    event = await stream.wait_for(answers(1), probe.timeout)
    msg = event.message if event else None
    result = msg.get("result") if isinstance(msg, dict) else None
    if exchange.status != 202 or not isinstance(result, dict) or "sessionId" not in result:
        raise SetupError(f"session/new over HTTP failed: {exchange.describe()}; answer {msg!r}")
    return str(result["sessionId"])


def _status_is(exchange: Exchange, status: int, what: str) -> Outcome | None:
    if exchange.status != status:
        return failed(f"{what}: expected HTTP {status}, got {exchange.describe()}")
    return None


@requirement(
    "http.opening-post",
    Tier.MUST,
    "POST initialize without Acp-Connection-Id is answered 200 with the JSON-RPC response "
    "and a new, distinct Acp-Connection-Id header.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def initialize_opens_connection(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        first, connection = await probe.initialize()
        if bad := _status_is(first, 200, "initialize"):
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

    return await _with_probe(ctx, body)


@requirement(
    "http.post-accepted",
    Tier.MUST,
    "A POST on a known connection is accepted with 202 and answered "
    "on the connection's event stream.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def post_accepted_and_answered_on_stream(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, stream = await _connected(probe)
        exchange = await probe.post(
            rpc(7, "session/new", {"cwd": str(ctx.work), "mcpServers": []}), connection
        )
        if bad := _status_is(exchange, 202, "session/new on a known connection"):
            return bad
        if await stream.wait_for(answers(7), ctx.timeout) is None:
            return failed("the answer to session/new never arrived on the connection stream")
        return passed("202, then the answer on the connection stream")

    return await _with_probe(ctx, body)


@requirement(
    "http.missing-connection-id",
    Tier.MUST,
    "A POST other than initialize without Acp-Connection-Id is refused with 400.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def missing_connection_id(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        exchange = await probe.post(rpc(1, "session/new", {"cwd": str(ctx.work), "mcpServers": []}))
        return _status_is(exchange, 400, "session/new without Acp-Connection-Id") or passed(
            "refused with 400"
        )

    return await _with_probe(ctx, body)


@requirement(
    "http.unknown-connection-id",
    Tier.MUST,
    "A POST naming an unknown Acp-Connection-Id is refused with 404.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def unknown_connection_id(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        exchange = await probe.post(
            rpc(1, "session/new", {"cwd": str(ctx.work), "mcpServers": []}),
            "acp-conformance-no-such-connection",
        )
        return _status_is(exchange, 404, "a POST naming an unknown connection") or passed(
            "refused with 404"
        )

    return await _with_probe(ctx, body)


@requirement(
    "http.content-type",
    Tier.MUST,
    "A POST whose Content-Type is not application/json is refused with 415.",
    _rfd_must("POST Content-Type MUST be application/json (415 otherwise)"),
    scenario=HTTP,
)
async def wrong_content_type(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, _ = await _connected(probe)
        exchange = await probe.post(
            rpc(3, "session/new", {"cwd": str(ctx.work), "mcpServers": []}),
            connection,
            content_type="text/plain",
        )
        return _status_is(exchange, 415, "a text/plain POST") or passed("refused with 415")

    return await _with_probe(ctx, body)


@requirement(
    "http.accept-event-stream",
    Tier.MUST,
    "A GET that does not accept text/event-stream is refused with 406.",
    _rfd_must("GET Accept MUST include text/event-stream (406 otherwise)"),
    scenario=HTTP,
)
async def get_without_event_stream_accept(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, _ = await _connected(probe)
        reader = await probe.open_stream(connection, accept="application/json")
        reader.close()
        if reader.status != 406:
            return failed(f"a GET accepting only application/json got HTTP {reader.status}")
        return passed("refused with 406")

    return await _with_probe(ctx, body)


def _error_code(value: Any) -> Any:
    error = value.get("error") if isinstance(value, dict) else None
    return error.get("code") if isinstance(error, dict) else None


@requirement(
    "http.batch-rejected",
    Tier.MUST,
    "A JSON array body is refused with 400 and one -32600 error.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def batch_rejected(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, _ = await _connected(probe)
        batch = [rpc(4, "session/new", {"cwd": str(ctx.work), "mcpServers": []})]
        exchange = await probe.post(batch, connection)
        if bad := _status_is(exchange, 400, "a JSON array body"):
            return bad
        if _error_code(exchange.json_body()) != -32600:
            return failed(f"the 400 body is not a -32600 error: {exchange.describe()}")
        return passed("refused with 400 and -32600")

    return await _with_probe(ctx, body)


async def _still_usable(probe: HttpProbe, connection: str, stream: SseReader, cwd: str) -> bool:
    since = len(stream.events)
    await probe.post(rpc(99, "session/new", {"cwd": cwd, "mcpServers": []}), connection)
    return await stream.wait_for(answers(99), probe.timeout, since) is not None


@requirement(
    "http.invalid-json",
    Tier.MUST,
    "A body that is not JSON is refused with 400 (a JSON-RPC body, "
    "if any, carries -32700) and the connection stays usable.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def invalid_json_refused(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, stream = await _connected(probe)
        exchange = await probe.post(None, connection, raw=b'{"jsonrpc": "2.0", "id": 5, "meth')
        if bad := _status_is(exchange, 400, "a body that is not JSON"):
            return bad
        answer = exchange.json_body()
        if answer is not None and _error_code(answer) != -32700:
            return failed(f"the 400 body is JSON but not a -32700 error: {exchange.describe()}")
        if not await _still_usable(probe, connection, stream, str(ctx.work)):
            return failed("after the bad body the connection no longer answers session/new")
        return passed("refused with 400; the connection stays usable")

    return await _with_probe(ctx, body)


def _answer_or_null(request_id: Any) -> Callable[[StreamEvent], bool]:
    def match(event: StreamEvent) -> bool:
        msg = event.message
        return isinstance(msg, dict) and "method" not in msg and msg.get("id") in (request_id, None)

    return match


@requirement(
    "http.invalid-message",
    Tier.MUST,
    "JSON that is not a JSON-RPC message is refused with 400 or "
    "answered with -32600, and the connection stays usable.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def non_message_json_refused(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, stream = await _connected(probe)
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
                code = _error_code(exchange.json_body())
                if code not in (None, -32600):
                    problems.append(f"{label}: 400 with error {code}, not -32600")
                continue
            if exchange.status != 202:
                problems.append(f"{label}: {exchange.describe()}")
                continue
            event = await stream.wait_for(_answer_or_null(rid), ctx.timeout, since)
            if event is None or _error_code(event.message) != -32600:
                problems.append(f"{label}: accepted with 202 but answered {event and event.data!r}")
        if problems:
            return failed("; ".join(problems))
        if not await _still_usable(probe, connection, stream, str(ctx.work)):
            return failed("after the bad messages the connection no longer answers session/new")
        return passed("every non-message body was refused with 400 or answered -32600")

    return await _with_probe(ctx, body)


@requirement(
    "http.session-header",
    Tier.MUST,
    "A session-scoped request without Acp-Session-Id, or with one "
    "that differs from params.sessionId, is refused with 400.",
    _rfd_must(
        "POST requests for session-scoped operations MUST include both "
        "Acp-Connection-Id and Acp-Session-Id headers"
    ),
    scenario=HTTP,
)
async def session_header_required(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, stream = await _connected(probe)
        session = await _new_session(probe, connection, stream, str(ctx.work))
        prompt = rpc(8, "session/prompt", {"sessionId": session, "prompt": []})
        missing = await probe.post(prompt, connection)
        if bad := _status_is(missing, 400, "session/prompt without Acp-Session-Id"):
            return bad
        mismatched = await probe.post(prompt, connection, "acp-conformance-other-session")
        if bad := _status_is(mismatched, 400, "session/prompt with a mismatched Acp-Session-Id"):
            return bad
        return passed("missing and mismatched Acp-Session-Id refused with 400")

    return await _with_probe(ctx, body)


@requirement(
    "http.stream-routing",
    Tier.MUST,
    "Connection-level answers arrive on the connection stream; a "
    "session's updates and prompt answers on that session's stream only.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def streams_carry_their_own_messages(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, conn_stream = await _connected(probe)
        session = await _new_session(probe, connection, conn_stream, str(ctx.work))
        session_stream = await probe.open_stream(connection, session)
        if session_stream.status != 200:
            return failed(f"GET with Acp-Session-Id {session!r} got HTTP {session_stream.status}")
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "say hello"}]}
        exchange = await probe.post(rpc(9, "session/prompt", prompt), connection, session)
        if bad := _status_is(exchange, 202, "session/prompt with its session header"):
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

    return await _with_probe(ctx, body)


@requirement(
    "http.single-reader",
    Tier.MUST,
    "A second GET of a stream that already has a reader is refused with 409.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def second_reader_conflicts(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, _ = await _connected(probe)
        second = await probe.open_stream(connection)
        second.close()
        if second.status != 409:
            return failed(f"a second reader of the connection stream got HTTP {second.status}")
        return passed("refused with 409")

    return await _with_probe(ctx, body)


@requirement(
    "http.delete-ends-connection",
    Tier.MUST,
    "DELETE ends the connection (202); its stream ends and later POSTs naming it get 404.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def delete_ends_connection(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, stream = await _connected(probe)
        exchange = await probe.delete(connection)
        if bad := _status_is(exchange, 202, "DELETE of the connection"):
            return bad
        with anyio.move_on_after(ctx.timeout):
            await stream.ended.wait()
        if not stream.ended.is_set():
            return failed("the connection stream stayed open after DELETE")
        after = await probe.post(
            rpc(2, "session/new", {"cwd": str(ctx.work), "mcpServers": []}), connection
        )
        return _status_is(after, 404, "a POST naming the deleted connection") or passed(
            "202, the stream ended, later POSTs get 404"
        )

    return await _with_probe(ctx, body)


@requirement(
    "http.token-required",
    Tier.MUST,
    "With a token configured (--token), requests without it or with "
    "a wrong one are refused with 401.",
    _SDK_HOUSE_RULE,
    scenario=HTTP,
    house=True,
)
async def token_required(ctx: CheckContext) -> Outcome:
    if not ctx.config.remote or not ctx.config.remote.token:
        return not_applicable("no --token given: the endpoint is not expected to need one")

    async def body(probe: HttpProbe) -> Outcome:
        without, _ = await probe.initialize(auth=False)
        if bad := _status_is(without, 401, "initialize without the bearer token"):
            return bad
        wrong, _ = await probe.initialize(auth=False, Authorization="Bearer not-the-token")
        return _status_is(wrong, 401, "initialize with a wrong token") or passed(
            "missing and wrong tokens refused with 401"
        )

    return await _with_probe(ctx, body)


@requirement(
    "http.origin-checked",
    Tier.SHOULD,
    "A request with a foreign Origin header is refused with 403.",
    _RFD,
    scenario=HTTP,
)
async def foreign_origin_refused(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        exchange, _ = await probe.initialize(Origin="http://attacker.invalid")
        return _status_is(exchange, 403, "initialize from a foreign Origin") or passed(
            "refused with 403"
        )

    return await _with_probe(ctx, body)


@requirement(
    "http.protocol-version-checked",
    Tier.SHOULD,
    "A request naming an unsupported Acp-Protocol-Version is refused with 400.",
    _RFD,
    scenario=HTTP,
)
async def unsupported_protocol_version_refused(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        exchange, _ = await probe.initialize(Acp_Protocol_Version="65535")
        return _status_is(exchange, 400, "initialize with Acp-Protocol-Version 65535") or passed(
            "refused with 400"
        )

    return await _with_probe(ctx, body)


async def _prompt_events(
    probe: HttpProbe, connection: str, session: str, reader: SseReader, rid: int
) -> bool:
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": f"turn {rid}"}]}
    await probe.post(rpc(rid, "session/prompt", prompt), connection, session)
    return await reader.wait_for(answers(rid), probe.timeout * 3) is not None


@requirement(
    "http.sse-event-ids",
    Tier.SHOULD,
    "Every SSE event carries an id, so a client can resume.",
    _RFD,
    scenario=HTTP,
)
async def events_carry_ids(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, conn_stream = await _connected(probe)
        session = await _new_session(probe, connection, conn_stream, str(ctx.work))
        reader = await probe.open_stream(connection, session)
        await _prompt_events(probe, connection, session, reader, 20)
        events = conn_stream.events + reader.events
        missing = [e.data[:100] for e in events if not e.event_id]
        if not events:
            return failed("no events arrived to judge")
        if missing:
            return failed(f"{len(missing)} of {len(events)} events have no id, e.g. {missing[0]}")
        return passed(f"all {len(events)} events carry an id")

    return await _with_probe(ctx, body)


@requirement(
    "http.sse-resume",
    Tier.SHOULD,
    "A client reconnecting with Last-Event-ID receives every event it "
    "missed, and none it had already received.",
    _RFD,
    scenario=HTTP,
)
async def resume_loses_nothing(ctx: CheckContext) -> Outcome:
    async def body(probe: HttpProbe) -> Outcome:
        connection, conn_stream = await _connected(probe)
        session = await _new_session(probe, connection, conn_stream, str(ctx.work))
        first = await probe.open_stream(connection, session)
        if not await _prompt_events(probe, connection, session, first, 30):
            return failed("the first prompt was not answered on the session stream")
        last_id = first.events[-1].event_id if first.events else None
        if not last_id:
            return failed("the session stream's events carry no id to resume from")
        first.close()
        with anyio.move_on_after(ctx.timeout):
            await first.ended.wait()
        # While nobody reads the session stream, a second turn happens.
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "while away"}]}
        await probe.post(rpc(31, "session/prompt", prompt), connection, session)
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

    return await _with_probe(ctx, body)
