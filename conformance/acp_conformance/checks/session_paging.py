"""session/list: the shape of a listing, its cwd filter, a cursor it never issued, and its
pagination followed to the end: every ``nextCursor`` the agent issues is passed back until a
page comes without one (issue 36, item 4)."""

from __future__ import annotations

from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ..scenarios._expect import brief, exchange_frames, expect_error, expect_result, result_dict
from ..scenarios.catalog import SESSIONS
from ..scenarios.check_context import CheckContext
from .session_steps import listed_sessions, session_with_history


@check("session.list-shape", scenario=SESSIONS)
async def list_returns_session_infos(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    await session_with_history(ctx, run)
    response = await run.live.request("session/list", {})
    if (bad := expect_result(response, "session/list")) is not None:
        return bad
    sessions = listed_sessions(response)
    if sessions is None:
        return failed("session/list result has no sessions array", frames=exchange_frames(response))
    for info in sessions:
        if (
            not isinstance(info, dict)
            or not isinstance(info.get("sessionId"), str)
            or not isinstance(info.get("cwd"), str)
        ):
            return failed(f"malformed session entry {info!r}", frames=exchange_frames(response))
    return passed(f"{len(sessions)} sessions listed", frames=exchange_frames(response))


@check("session.list-cwd-filter", scenario=SESSIONS)
async def list_filter_by_cwd(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    other = ctx.runtime.tmp / "other-cwd"
    other.mkdir(exist_ok=True)
    await run.live.request("session/new", {"cwd": str(other), "mcpServers": []})
    await session_with_history(ctx, run)
    response = await run.live.request("session/list", {"cwd": str(ctx.work)})
    if (bad := expect_result(response, "session/list with cwd")) is not None:
        return bad
    sessions = listed_sessions(response) or []
    wrong = [s for s in sessions if isinstance(s, dict) and s.get("cwd") != str(ctx.work)]
    if wrong:
        return failed(
            f"cwd filter returned sessions of other directories: {wrong[:2]!r}",
            frames=exchange_frames(response),
        )
    unused = ctx.runtime.tmp / "cwd-no-session-uses"
    empty = await run.live.request("session/list", {"cwd": str(unused)})
    if (bad := expect_result(empty, "session/list with a cwd no session uses")) is not None:
        return bad
    listed = result_dict(empty).get("sessions")
    if listed != []:
        return failed(
            f"session/list with a cwd no session uses answered sessions {listed!r}, not []",
            frames=exchange_frames(empty),
        )
    return passed(
        f"{len(sessions)} sessions, all in the requested cwd; [] for a cwd no session uses",
        frames=exchange_frames(response, empty),
    )


@check("session.list-bad-cursor", scenario=SESSIONS)
async def list_rejects_unknown_cursor(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request("session/list", {"cursor": "acp-conformance-bogus-cursor"})
    return expect_error(response, (-32602,), "session/list with a cursor it never issued")


#: Pages followed at most: past this the listing is judged as never ending.
MAX_PAGES = 50


@check("session.list-cursor-followed", scenario=SESSIONS)
async def list_cursors_lead_to_the_end(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    seen: dict[str, int] = {}  # cursor → the page that issued it
    frames: list[int] = []
    cursor: str | None = None
    sessions = 0
    for page in range(1, MAX_PAGES + 1):
        response = await run.live.request("session/list", {"cursor": cursor} if cursor else {})
        frames += exchange_frames(response)
        if response.is_error:
            what = f"the cursor {cursor!r} issued by page {page - 1}" if cursor else "session/list"
            return failed(f"{what} was refused: {brief(response.frame)}", frames=frames[-4:])
        result = result_dict(response)
        listed = result.get("sessions")
        sessions += len(listed) if isinstance(listed, list) else 0
        following = result.get("nextCursor")
        if following is None:
            return passed(f"{page} page(s), {sessions} sessions, ended", frames=frames[-4:])
        if not isinstance(following, str):
            return failed(
                f"page {page}'s nextCursor is not a string: {following!r}", frames=frames[-2:]
            )
        if following in seen:
            return failed(
                f"page {page} issued the cursor {following!r} again (page {seen[following]} "
                "issued it first): the listing loops",
                frames=frames[-2:],
            )
        seen[following] = page
        cursor = following
    return failed(
        f"session/list still had a nextCursor after {MAX_PAGES} pages", frames=frames[-2:]
    )
