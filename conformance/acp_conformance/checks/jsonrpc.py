"""jsonrpc.*: the JSON-RPC envelope driven on purpose: ids echoed, error codes for bad lines,
batches, unknown methods and ill-typed params, notifications left unanswered.

The rules every frame must obey (a valid envelope, one response per request, error shapes)
are run-wide judges in :mod:`acp_conformance.judges.wire`."""

from __future__ import annotations

import functools
import itertools
import json

from ..harness.agent_client import (
    BARRIER_METHOD,
    AgentConnection,
    AgentTimeout,
    Pending,
    id_key,
    id_text,
)
from ..harness.recorder import Frame
from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ..scenarios._expect import brief, expect_error, expect_result
from ..scenarios.catalog import ENVELOPE
from ..scenarios.check_context import CheckContext
from ..scenarios.quiet_probes import silence_until_barrier

#: After the agent has answered a request sent *behind* the bad line, it has read the bad
#: line too; an error for it still missing this long after that answer will not come. This
#: replaces a full ``--timeout`` of silence per bad line (90 s against agents that ignore them).
GRACE_AFTER_LATER_ANSWER = 2.0
#: The grace is scaled to the evidence: this many times the round trip of that later request,
#: never below ``GRACE_FLOOR``. An error for a bad line needs no more work than that answer
#: (no model, no session), so an agent that answered in 5 ms and still owes it after 0.5 s
#: is not sending it; an agent answering in 100 ms (a remote one) keeps the full 2 s.
GRACE_PER_ROUND_TRIP = 20.0
GRACE_FLOOR = 0.5


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
            and (
                id_key(f.message["id"]) in keys
                # The id with its type changed (32 as "32") is jsonrpc.id-echo's defect.
                or (expected_id is not None and id_text(f.message["id"]) == id_text(expected_id))
            )
        )

    later = await conn.start_request(
        BARRIER_METHOD, {}, id=f"conformance-after-bad-line-{next(_later_ids)}"
    )
    try:
        await later.wait()
    except AgentTimeout:
        # No answer to the later request either: the full bound has run out.
        return await conn.wait_for(names_the_line, since=since, what=what, timeout=0)
    grace = _grace(later)
    try:
        return await conn.wait_for(names_the_line, since=since, what=what, timeout=grace)
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
            f"error followed within {grace:.2g} s of that answer"
        ) from None


def _grace(later: Pending) -> float:
    """How long after the later request's answer an error for the bad line may still come."""
    assert later.response is not None
    round_trip = later.response.frame.t - later.request.t
    return min(GRACE_AFTER_LATER_ANSWER, max(GRACE_FLOOR, GRACE_PER_ROUND_TRIP * round_trip))


def _error_code(frame: Frame) -> object:
    err = frame.message.get("error") if isinstance(frame.message, dict) else None
    return err.get("code") if isinstance(err, dict) else None


@check("jsonrpc.id-echo", scenario=ENVELOPE)
async def integer_and_string_ids_are_echoed(ctx: CheckContext) -> Outcome:
    # The scenario's agent: the preflight has seen a fresh process echo initialize's id, so
    # these ids go to requests of an initialized one (no process is started for them).
    run = await ctx.agent()
    conn = run.live
    session: dict[str, object] = {"cwd": str(ctx.work), "mcpServers": []}
    # Errors carry the id too: an agent that echoes 1 as "1" only on its error path is
    # caught here, and not charged to the rules whose probes end in an error.
    probes: list[tuple[object, str, dict[str, object], bool]] = [
        (4242, "session/new", session, False),
        ("conformance-id-é", "session/new", session, False),
        (0, "session/new", session, False),
        (4343, "session/no_such_method", {}, True),
    ]
    # Sent together, as an editor may: an agent that takes a second per session/new
    # (claude-agent-acp) answers the three in little more than one.
    pendings = [
        await conn.start_request(method, params, id=rid, deliberate=probe)
        for rid, method, params, probe in probes
    ]
    frames: list[int] = []
    for (rid, _, _, _), pending in zip(probes, pendings, strict=True):
        # The answer is the response whose id reads the same, whatever its type.
        try:
            answer = await conn.wait_for(
                functools.partial(_is_answer_to, rid=rid),
                since=pending.request.seq,
                what=f"an answer to {pending.method} (id {rid!r})",
            )
        except AgentTimeout:
            # The check said so; the request is not also "never answered".
            conn.recorder.abandoned.add(pending.request.seq)
            raise
        frames += [pending.request.seq, answer.seq]
        if id_key(answer.message["id"]) != id_key(rid):
            kind = "error" if "error" in answer.message else "result"
            return failed(
                f"request id {rid!r} came back as {answer.message['id']!r} (in an {kind})",
                frames=[pending.request.seq, answer.seq],
            )
    return passed(
        "integer, zero and non-ASCII string ids echoed unchanged, on results and errors",
        frames=frames,
    )


def _is_answer_to(frame: Frame, rid: object) -> bool:
    msg = frame.message
    return (
        isinstance(msg, dict)
        and "method" not in msg
        and ("result" in msg or "error" in msg)
        and id_text(msg.get("id")) == id_text(rid)
    )


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
    # Waiting for id 41 too: an agent that serves the batch's requests one by one answers it.
    frame = await _response_to_raw(run.live, json.dumps(batch).encode(), 41)
    if frame.message.get("id") == 41:
        return failed(
            f"a batch was answered line by line (its request 41 on its own line: "
            f"{brief(frame)}), not with one -32600",
            frames=[frame.seq],
        )
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
    if (bad := expect_result(response, "after bad lines session/new")) is not None:
        return bad
    return passed("session/new still works after five bad lines", frames=[response.frame.seq])


@check("jsonrpc.notification-not-answered", scenario=ENVELOPE)
async def cancel_for_unknown_session_is_not_answered(ctx: CheckContext) -> Outcome:
    return await silence_until_barrier(ctx, "session/cancel", {"sessionId": "no-such-session"})
