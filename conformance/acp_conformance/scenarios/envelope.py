"""JSON-RPC envelope and extensibility: ids, error codes, notifications, bad lines."""

from __future__ import annotations

import itertools
import json

import anyio

from ..harness.agent_client import BARRIER_METHOD, AgentConnection, AgentTimeout, id_key
from ..harness.recorder import Frame
from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ._expect import brief, expect_error
from .check_context import CheckContext, scenario

ENVELOPE = scenario("envelope", "JSON-RPC envelope, error codes and extension methods")


#: After the agent has answered a request sent *behind* the bad line, it has read the bad
#: line too; an error for it still missing this long after that answer will not come. This
#: replaces a full ``--timeout`` of silence per bad line (90 s against agents that ignore them).
GRACE_AFTER_LATER_ANSWER = 2.0
#: Each later request gets its own id: one connection may see several bad lines.
_later_ids = itertools.count(1)


async def _response_to_raw(conn: AgentConnection, line: bytes, expected_id: object) -> Frame:
    """Send a deliberately bad line and wait for the error response naming ``expected_id``."""
    await conn.send_line(line, deliberate=True)
    keys = {id_key(expected_id), id_key(None)}
    since = len(conn.recorder.frames) - 1
    what = f"an error response to {line[:60]!r}"

    def names_the_line(f: Frame) -> bool:
        return (
            isinstance(f.message, dict)
            and "method" not in f.message
            and "id" in f.message
            and id_key(f.message["id"]) in keys
        )

    later = await conn.start_request(
        BARRIER_METHOD, {}, id=f"conformance-after-bad-line-{next(_later_ids)}"
    )
    try:
        await later.wait()
    except AgentTimeout:
        # No answer to the later request either: the full bound has run out.
        return await conn.wait_for(names_the_line, since=since, what=what, timeout=0)
    try:
        return await conn.wait_for(
            names_the_line, since=since, what=what, timeout=GRACE_AFTER_LATER_ANSWER
        )
    except AgentTimeout:
        idless = next(
            (
                f
                for f in conn.agent_frames(since)
                if isinstance(f.message, dict) and "error" in f.message and "id" not in f.message
            ),
            None,
        )
        if idless is not None:
            # An answer, but not a JSON-RPC response: it names no id (not even null).
            raise AgentTimeout(
                f"agent did not send {what}: its error for it has no id member "
                f"(#{idless.seq}: {idless.text(160)})"
            ) from None
        raise AgentTimeout(
            f"agent did not send {what}: it answered a request sent after that line, and no "
            f"error followed within {GRACE_AFTER_LATER_ANSWER:g} s of that answer"
        ) from None


def _error_code(frame: Frame) -> object:
    err = frame.message.get("error") if isinstance(frame.message, dict) else None
    return err.get("code") if isinstance(err, dict) else None


@check("jsonrpc.id-echo", scenario=ENVELOPE)
async def integer_and_string_ids_are_echoed(ctx: CheckContext) -> Outcome:
    run = await ctx.spawn(initialize=False)
    conn = run.live
    session: dict[str, object] = {"cwd": str(ctx.work), "mcpServers": []}
    probes: list[tuple[object, str, dict[str, object]]] = [
        (4242, "initialize", ctx.runtime.initialize_params(run)),
        ("conformance-id-é", "session/new", session),
        (0, "session/new", session),
    ]
    frames: list[int] = []
    for rid, method, params in probes:
        pending = await conn.start_request(method, params, id=rid)
        try:
            response = await pending.wait()
        except AgentTimeout:
            stray = [
                f
                for f in conn.agent_frames(pending.request.seq)
                if isinstance(f.message, dict) and "method" not in f.message
            ]
            if stray:
                return failed(
                    f"request id {rid!r} came back as {stray[0].message.get('id')!r}",
                    frames=[pending.request.seq, stray[0].seq],
                )
            raise
        frames += [pending.request.seq, response.frame.seq]
    return passed("integer, zero and non-ASCII string ids echoed unchanged", frames=frames)


@check("jsonrpc.parse-error", scenario=ENVELOPE)
async def invalid_json_gets_parse_error(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    frame = await _response_to_raw(run.live, b'{"jsonrpc": "2.0", "id": 5, "method": ', None)
    if frame.message.get("id") is not None:
        return failed(
            f"parse error answered with id {frame.message.get('id')!r}, not null",
            frames=[frame.seq],
        )
    if _error_code(frame) != -32700:
        return failed(f"invalid JSON answered with {brief(frame)}", frames=[frame.seq])
    return passed("-32700 with id null", frames=[frame.seq])


_INVALID_REQUESTS: list[tuple[str, object, object]] = [
    ("a bare number", 17, None),
    ("a string", "initialize", None),
    ("an object without method", {"jsonrpc": "2.0", "id": 31}, 31),
    ("jsonrpc 1.0", {"jsonrpc": "1.0", "id": 32, "method": "session/list", "params": {}}, 32),
    ("a non-string method", {"jsonrpc": "2.0", "id": 33, "method": 7}, 33),
    ("an object id", {"jsonrpc": "2.0", "id": {"x": 1}, "method": "session/list"}, None),
]


@check("jsonrpc.invalid-request", scenario=ENVELOPE)
async def non_request_json_gets_invalid_request(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    frames = []
    for label, value, rid in _INVALID_REQUESTS:
        if label == "an object without method":
            # A bare {"id": 31} may be read as a response to an unknown request and ignored;
            # both answers are acceptable, so only the others are required to get -32600.
            continue
        line = json.dumps(value).encode()
        frame = await _response_to_raw(run.live, line, rid)
        frames.append(frame.seq)
        if _error_code(frame) != -32600:
            return failed(f"{label} answered with {brief(frame)}", frames=frames)
    return passed("non-request JSON answered with -32600", frames=frames)


@check("jsonrpc.batch-rejected", scenario=ENVELOPE)
async def batches_get_one_invalid_request(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    batch = [{"jsonrpc": "2.0", "id": 41, "method": "session/list", "params": {}}]
    frame = await _response_to_raw(run.live, json.dumps(batch).encode(), None)
    if _error_code(frame) != -32600:
        return failed(f"a batch was answered with {brief(frame)}", frames=[frame.seq])
    return passed("batch answered with -32600", frames=[frame.seq])


@check("jsonrpc.method-not-found", scenario=ENVELOPE)
async def unknown_method_gets_method_not_found(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request("session/no_such_method", {}, deliberate=True)
    return expect_error(response, (-32601,), "an unknown method")


@check("jsonrpc.invalid-params", scenario=ENVELOPE)
async def ill_typed_params_get_invalid_params(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request(
        "session/new", {"cwd": 42, "mcpServers": "none"}, deliberate=True
    )
    return expect_error(response, (-32602,), "session/new with cwd 42")


@check("jsonrpc.survives-bad-input", scenario=ENVELOPE)
async def agent_keeps_answering_after_bad_lines(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    for line in (b"not json at all", b"[]", b"{}", b"null", b'{"jsonrpc":"2.0","id":9'):
        await run.live.send_line(line, deliberate=True)
    response = await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    if response.is_error:
        return failed(
            f"after bad lines session/new failed: {brief(response.frame)}",
            frames=[response.frame.seq],
        )
    return passed("session/new still works after five bad lines", frames=[response.frame.seq])


#: How long a probe that expects no answer listens for one when the agent does not answer
#: the barrier (an agent that ignores unknown ``_`` requests): a short quiet period, not the
#: full ``--timeout``.
QUIET_PERIOD = 0.5


def _is_response(frame: Frame) -> bool:
    return isinstance(frame.message, dict) and "method" not in frame.message


async def _silence_until_barrier(
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
    own = {
        id_key(f.message["id"])
        for f in conn.recorder.frames
        if f.direction == "c2a"
        and isinstance(f.message, dict)
        and "method" in f.message
        and "id" in f.message
    }
    stray = [
        f
        for f in conn.agent_frames(start)
        if f.seq < end and _is_response(f) and id_key(f.message.get("id")) not in own
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


@check("jsonrpc.notification-not-answered", scenario=ENVELOPE)
async def cancel_for_unknown_session_is_not_answered(ctx: CheckContext) -> Outcome:
    return await _silence_until_barrier(ctx, "session/cancel", {"sessionId": "no-such-session"})


@check("cancel.cancel-request-unknown-ignored", scenario=ENVELOPE)
async def cancel_request_for_unknown_ids_is_ignored(ctx: CheckContext) -> Outcome:
    frames: list[int] = []
    # An integer and a string id, neither ever sent by the checker.
    for request_id in (987654321, "acp-conformance-no-such-request"):
        outcome = await _silence_until_barrier(ctx, "$/cancel_request", {"requestId": request_id})
        if outcome.verdict.value != "pass":
            return outcome
        frames += outcome.frames
    return passed(
        "$/cancel_request for unknown integer and string ids got no answer and the agent "
        "stayed responsive",
        frames=frames,
    )


@check("ext.unknown-notification-ignored", scenario=ENVELOPE)
async def unknown_extension_notification_is_ignored(ctx: CheckContext) -> Outcome:
    return await _silence_until_barrier(ctx, "_acp_conformance/notice", {"hello": "world"})


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
    if response.is_error:
        return failed(
            f"session/new with _meta failed: {brief(response.frame)}", frames=[response.frame.seq]
        )
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
