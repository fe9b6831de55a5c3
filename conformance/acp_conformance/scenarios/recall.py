"""Rules the official ACP test kit judges that the other modules only caught indirectly:
every custom (``_``-prefixed) request is answered, and a prompt turn's updates name the
session being prompted (not another session of the same connection)."""

from __future__ import annotations

from collections.abc import Iterator

from ..citations import acp, jsonrpc, schema_requires
from ..harness.agent_client import AgentExited, AgentTimeout, id_key
from ..outcomes import NO_DEADLINE, Outcome, failed, passed, soft_failed
from ..requirements import RUN_WIDE, Tier, requirement
from .check_context import AgentRun, CheckContext, RunRecord
from .envelope import ENVELOPE
from .wire import Offence, _per_run

#: A custom method no agent implements (the barrier's own method is answered by some agents
#: that answer nothing else, so it is not used here).
CUSTOM_PROBE = "_acp_conformance/custom-probe"


@requirement(
    "ext.custom-request-answered",
    Tier.MUST,
    "A custom (_-prefixed) request gets a response with its id: a result or any error.",
    acp(
        "extensibility",
        "Custom requests",
        "Upon receiving a custom request, implementations MUST respond accordingly with the "
        "provided id",
    )
    + "; "
    + jsonrpc("§5 Response object", "response_object", "the Server MUST reply with a Response"),
    scenario=ENVELOPE,
)
async def custom_request_is_answered(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    pending = await run.live.start_request(CUSTOM_PROBE, {"probe": True})
    try:
        response = await pending.wait()
    except AgentTimeout as exc:
        return await _unanswered(ctx, run, pending.request.seq, str(exc))
    kind = f"error {response.error_code}" if response.is_error else "a result"
    return passed(
        f"{CUSTOM_PROBE} was answered with {kind}", frames=[pending.request.seq, response.frame.seq]
    )


async def _unanswered(ctx: CheckContext, run: AgentRun, sent: int, why: str) -> Outcome:
    """No answer in time: a MUST failure only when the agent answers a request sent after it
    (it ignores custom requests); if it answers nothing, the agent is merely slow or stuck,
    which the spec sets no deadline for."""
    request = run.frames[sent].message
    try:
        later = await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
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
        f"the custom request {CUSTOM_PROBE} (id {request['id']!r}) was never answered, although "
        f"session/new sent after it was (#{later.frame.seq}): custom requests must get a response",
        frames=[sent, later.request.seq, later.frame.seq],
    )


#: Updates that belong to a running turn (replays and announcements may name any session).
TURN_KINDS = frozenset(
    {"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"}
)


def _session_of(params: object) -> object:
    return params.get("sessionId") if isinstance(params, dict) else None


def _cross_talk(run: AgentRun) -> Iterator[Offence]:
    in_flight: dict[str, tuple[str, object]] = {}  # request id -> (method, session named)
    for frame in run.frames:
        msg = frame.message
        if not isinstance(msg, dict):
            continue
        method = msg.get("method")
        if frame.direction == "c2a" and isinstance(method, str) and "id" in msg:
            in_flight[id_key(msg["id"])] = (method, _session_of(msg.get("params")))
        elif frame.direction == "a2c" and method is None and "id" in msg:
            in_flight.pop(id_key(msg["id"]), None)
        elif frame.direction == "a2c" and method == "session/update":
            params = msg.get("params")
            update = params.get("update") if isinstance(params, dict) else None
            kind = update.get("sessionUpdate") if isinstance(update, dict) else None
            if kind not in TURN_KINDS:
                continue
            waiting = list(in_flight.values())
            # Judged only when the prompt is the one thing in flight: then the turn is its.
            if len(waiting) != 1 or waiting[0][0] != "session/prompt":
                continue
            prompted, named = waiting[0][1], _session_of(params)
            if named != prompted:
                yield (
                    frame,
                    (
                        f"a {kind} update names session {named!r} while only session "
                        f"{prompted!r}'s prompt was running"
                    ),
                )


@requirement(
    "prompt.updates-name-prompted-session",
    Tier.MUST,
    "While one session's prompt is the only request in flight, the turn's updates (messages, "
    "thoughts, tool calls, plans) name that session, never another session of the connection.",
    schema_requires("SessionNotification.sessionId, the session the update pertains to")
    + "; "
    + acp("prompt-turn", "Agent reports output"),
    scenario=RUN_WIDE,
)
def updates_name_the_prompted_session(record: RunRecord) -> list[Outcome]:
    return _per_run(record, _cross_talk, "turn updates naming another session")
