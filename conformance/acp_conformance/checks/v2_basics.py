"""version.v2-* (basics): more of protocol version 2 on the shared v2 agent of
:mod:`..scenarios.v2_agent`, outside any turn: distinct session ids (``mcpServers`` omitted or
empty alike), a custom request answered, a notification not answered, and the advertised auth
methods' types. Each is not applicable to an agent that does not speak v2 (out of scope), like
the rest of the ``version.v2-*`` requirements."""

from __future__ import annotations

from ..harness.agent_client import AgentExited, id_key
from ..outcomes import Outcome, failed, out_of_scope, passed
from ..scenarios._expect import brief
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.v2_agent import v2_check
from .extensibility import judge_custom_request


def _session_surface(run: AgentRun) -> bool:
    capabilities = (run.init_result or {}).get("capabilities")
    return isinstance(capabilities, dict) and isinstance(capabilities.get("session"), dict)


@v2_check("version.v2-session-ids")
async def v2_sessions_get_distinct_ids(ctx: CheckContext, run: AgentRun) -> Outcome:
    if not _session_surface(run):
        return out_of_scope("the v2 agent does not advertise capabilities.session")
    ids, frames = [], []
    for params in ({"cwd": str(ctx.work)}, {"cwd": str(ctx.work), "mcpServers": []}):
        response = await run.live.request("session/new", params)
        frames.append(response.frame.seq)
        result = response.result if isinstance(response.result, dict) else {}
        if response.is_error or not isinstance(result.get("sessionId"), str):
            form = "with mcpServers []" if "mcpServers" in params else "without mcpServers"
            return failed(f"v2 session/new {form} failed: {brief(response.frame)}", frames=frames)
        ids.append(result["sessionId"])
    if ids[0] == ids[1]:
        return failed(f"two v2 sessions got the same id {ids[0]!r}", frames=frames)
    return passed("two v2 sessions (mcpServers omitted, then []) got distinct ids", frames=frames)


@v2_check("version.v2-custom-request-answered")
async def v2_custom_request_is_answered(ctx: CheckContext, run: AgentRun) -> Outcome:
    return await judge_custom_request(run, "the v2 custom request", {"cwd": str(ctx.work)})


@v2_check("version.v2-notification-not-answered")
async def v2_notification_is_not_answered(ctx: CheckContext, run: AgentRun) -> Outcome:
    conn = run.live
    sent = await conn.notify("_acp_conformance/notice", {"hello": "world"})
    try:
        after = await conn.request("session/new", {"cwd": str(ctx.work)})
    except AgentExited:
        return failed("the agent exited after a v2 custom notification", frames=[sent.seq])
    own = {
        id_key(f.message["id"])
        for f in conn.recorder.frames
        if f.direction == "c2a" and isinstance(f.message, dict) and "id" in f.message
    }
    stray = [
        f
        for f in conn.agent_frames(sent.seq)
        if f.seq < after.frame.seq
        and isinstance(f.message, dict)
        and "method" not in f.message
        and id_key(f.message.get("id")) not in own
    ]
    if stray:
        return failed(
            f"the v2 notification was answered: {brief(stray[0])}", frames=[sent.seq, stray[0].seq]
        )
    return passed(
        "a v2 custom notification got no answer; the next request was answered",
        frames=[sent.seq, after.frame.seq],
    )


#: The auth method types the v2 schema defines (others must begin with "_").
V2_AUTH_TYPES = frozenset({"agent", "terminal"})


def _auth_problems(methods: object) -> list[str]:
    problems = []
    for method in methods if isinstance(methods, list) else []:
        if not isinstance(method, dict):
            continue
        kind, name = method.get("type"), method.get("methodId")
        if kind == "terminal":
            problems.append(
                f"terminal auth method {name!r} offered to a client without auth.terminal"
            )
            env = [e.get("name") for e in method.get("env") or [] if isinstance(e, dict)]
            if len(env) != len(set(map(repr, env))):
                problems.append(f"terminal auth method {name!r} repeats env names {env}")
        elif not (kind in V2_AUTH_TYPES or (isinstance(kind, str) and kind.startswith("_"))):
            problems.append(
                f"auth method {name!r} has type {kind!r}: not agent/terminal nor _-prefixed"
            )
    return problems


@v2_check("version.v2-auth-methods")
async def v2_auth_methods_follow_the_rules(ctx: CheckContext, run: AgentRun) -> Outcome:
    methods = (run.init_result or {}).get("authMethods")
    if problems := _auth_problems(methods):
        return failed("; ".join(problems))
    count = len(methods) if isinstance(methods, list) else 0
    return passed(f"{count} v2 auth methods, none of them terminal, every type known or _-prefixed")
