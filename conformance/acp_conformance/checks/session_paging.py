"""``session/list`` pagination followed to the end: every ``nextCursor`` the agent issues is
passed back until a page comes without one (issue 36, item 4)."""

from __future__ import annotations

from ..citations import schema_requires
from ..outcomes import Outcome, failed, passed
from ..requirements import Tier, requirement
from ..scenarios._expect import brief, result_dict
from ..scenarios.catalog import SESSIONS
from ..scenarios.check_context import CheckContext

#: Pages followed at most: past this the listing is judged as never ending.
MAX_PAGES = 50


@requirement(
    "session.list-cursor-followed",
    Tier.SHOULD,
    "Following session/list's nextCursor ends: every cursor the agent issued is accepted, and "
    "no cursor comes back twice (no loop).",
    schema_requires(
        "ListSessionsResponse.nextCursor: pass it in the next request's cursor to fetch the next "
        "page; absent when there are no more results"
    ),
    scenario=SESSIONS,
    gate="agentCapabilities.sessionCapabilities.list",
)
async def list_cursors_lead_to_the_end(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    seen: dict[str, int] = {}  # cursor → the page that issued it
    frames: list[int] = []
    cursor: str | None = None
    sessions = 0
    for page in range(1, MAX_PAGES + 1):
        response = await run.live.request("session/list", {"cursor": cursor} if cursor else {})
        frames += [response.request.seq, response.frame.seq]
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
