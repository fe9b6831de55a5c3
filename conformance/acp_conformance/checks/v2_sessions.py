"""version.v2-* (sessions): protocol version 2's session surface beyond session/new, on the
shared v2 agent of :mod:`..scenarios.v2_agent`: session/list (and its cwd filter),
session/delete, additional directories, and session/close of an idle session. Not applicable
(out of scope) to an agent that does not speak v2 or does not advertise the capability."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from ..harness.agent_client import Response
from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ..scenarios._expect import brief
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.v2_agent import V2_SCENARIO, v2_check, v2_problems, v2_run_with_sessions


async def _new_session(ctx: CheckContext, run: AgentRun, **extra: Any) -> Response:
    return await run.live.request("session/new", {"cwd": str(ctx.work), **extra})


async def _opened_session(ctx: CheckContext, run: AgentRun) -> tuple[Response, str] | Outcome:
    """A new session's answer and id, or the failure when the answer names no session."""
    created = await _new_session(ctx, run)
    session_id = created.result.get("sessionId") if isinstance(created.result, dict) else None
    if not isinstance(session_id, str):
        return failed(f"v2 session/new gave no session id: {brief(created.frame)}")
    return created, session_id


def _sessions(response: Response) -> Any:
    return response.result.get("sessions") if isinstance(response.result, dict) else None


@check("version.v2-session-list", scenario=V2_SCENARIO)
async def v2_session_list(ctx: CheckContext) -> Outcome:
    run = await v2_run_with_sessions(ctx, None)
    if isinstance(run, Outcome):
        return run
    created = await _new_session(ctx, run)
    frames = [created.frame.seq]
    if created.is_error:
        return failed(f"v2 session/new failed: {brief(created.frame)}", frames=frames)
    unused = str(ctx.runtime.tmp / "v2-cwd-no-session-uses")
    for params, what in (
        ({}, "no filter"),
        ({"cwd": str(ctx.work)}, "its cwd"),
        ({"cwd": unused}, "an unused cwd"),
    ):
        response = await run.live.request("session/list", params)
        frames.append(response.frame.seq)
        if response.is_error:
            return failed(
                f"v2 session/list ({what}) failed: {brief(response.frame)}", frames=frames
            )
        errors = v2_problems("session/list", "result", response.result)
        if errors:
            return failed(
                f"invalid v2 session/list result ({what}): {'; '.join(errors)}", frames=frames
            )
        sessions = _sessions(response)
        cwds = [s.get("cwd") for s in sessions if isinstance(s, dict)]
        relative = [c for c in cwds if not (isinstance(c, str) and PurePath(c).is_absolute())]
        if relative:
            return failed(f"v2 session/list names relative cwds {relative[:3]}", frames=frames)
        if "cwd" in params and any(c != params["cwd"] for c in cwds):
            if params["cwd"] == unused:
                return failed(
                    f"v2 session/list for a cwd no session uses answered {sessions!r:.200}, not []",
                    frames=frames,
                )
            return failed(
                f"v2 session/list filtered by cwd listed other cwds: {cwds[:3]}", frames=frames
            )
    return passed(
        "v2 session/list: valid, absolute cwds, filtered by cwd, [] for an unused cwd",
        frames=frames,
    )


@check("version.v2-session-delete", scenario=V2_SCENARIO)
async def v2_session_delete(ctx: CheckContext) -> Outcome:
    run = await v2_run_with_sessions(ctx, "delete")
    if isinstance(run, Outcome):
        return run
    opened = await _opened_session(ctx, run)
    if isinstance(opened, Outcome):
        return opened
    created, session_id = opened
    deleted = await run.live.request("session/delete", {"sessionId": session_id})
    frames = [created.frame.seq, deleted.frame.seq]
    if deleted.is_error or not isinstance(deleted.result, dict):
        return failed(f"v2 session/delete failed: {brief(deleted.frame)}", frames=frames)
    listed = await run.live.request("session/list", {})
    frames.append(listed.frame.seq)
    ids = [s.get("sessionId") for s in _sessions(listed) or [] if isinstance(s, dict)]
    if session_id in ids:
        return failed(f"the deleted session {session_id!r} is still listed", frames=frames)
    return passed("v2 session/delete answered {} and the session left session/list", frames=frames)


@check("version.v2-additional-directories", scenario=V2_SCENARIO)
async def v2_additional_directories(ctx: CheckContext) -> Outcome:
    run = await v2_run_with_sessions(ctx, "additionalDirectories")
    if isinstance(run, Outcome):
        return run
    extra = ctx.runtime.tmp / "v2-extra-root"
    extra.mkdir(exist_ok=True)
    response = await _new_session(ctx, run, additionalDirectories=[str(extra)])
    if response.is_error:
        return failed(
            f"v2 session/new with an additional directory failed: {brief(response.frame)}",
            frames=[response.frame.seq],
        )
    return passed(
        "v2 session/new accepted an absolute additional directory", frames=[response.frame.seq]
    )


@v2_check("version.v2-close-idle-session")
async def v2_close_idle_session(ctx: CheckContext, run: AgentRun) -> Outcome:
    opened = await _opened_session(ctx, run)
    if isinstance(opened, Outcome):
        return opened
    created, session_id = opened
    closed = await run.live.request("session/close", {"sessionId": session_id})
    frames = [created.frame.seq, closed.frame.seq]
    result = closed.result
    if closed.is_error or not isinstance(result, dict) or set(result) - {"_meta"}:
        return failed(f"session/close of an idle session: {brief(closed.frame)}", frames=frames)
    return passed("session/close of an idle session answered {}", frames=frames)
