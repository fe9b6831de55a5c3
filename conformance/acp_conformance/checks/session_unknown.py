"""Unknown session ids: every method that names a session must refuse one it never issued
(-32602, or -32002), or, for close and delete, may treat it as already done.

The single-method answers are one table (:data:`UNKNOWN_SESSION_ANSWERS`), each row its own
requirement judged by one body (:func:`_unknown_session_answered`); the prompt, set_mode and
set_config_option probes are one requirement with its own check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ..scenarios._expect import UNKNOWN_SESSION_CODES, exchange_frames, expect_error
from ..scenarios.catalog import SESSIONS
from ..scenarios.check_context import CheckContext, advertised, surface_value, text_prompt
from .families import register_family
from .session_steps import UNKNOWN_SESSION


@check("session.unknown-id-rejected", scenario=SESSIONS)
async def unknown_session_ids_are_rejected(ctx: CheckContext) -> Outcome:
    surface = await ctx.surface()
    run = await ctx.agent()
    probes: list[tuple[str, dict[str, Any]]] = [
        ("session/prompt", text_prompt(UNKNOWN_SESSION, "hello")),
    ]
    # set_mode and set_config_option exist only for agents that advertise modes / options;
    # probing them elsewhere would judge methods the agent never offered.
    if advertised(surface_value(surface, "session.modes")):
        probes.append(("session/set_mode", {"sessionId": UNKNOWN_SESSION, "modeId": "default"}))
    if advertised(surface_value(surface, "session.configOptions")):
        probes.append(
            (
                "session/set_config_option",
                {"sessionId": UNKNOWN_SESSION, "configId": "model", "value": "x"},
            )
        )
    frames: list[int] = []
    failures: list[str] = []
    for method, params in probes:
        response = await run.live.request(method, params)
        outcome = expect_error(response, UNKNOWN_SESSION_CODES, f"{method} for an unknown session")
        frames += outcome.frames
        if outcome.verdict.value == "fail":
            streamed = run.live.updates(UNKNOWN_SESSION, since=response.request.seq)
            if streamed and not response.is_error:
                outcome.reason += (
                    f" (and the agent sent {len(streamed)} session/update for that id, "
                    "treating it as a session)"
                )
            failures.append(outcome.reason)
    if failures:
        return failed("; ".join(failures), frames=frames)
    names = ", ".join(method.removeprefix("session/") for method, _ in probes)
    return passed(f"{names} reject unknown sessions", frames=frames)


@dataclass(frozen=True)
class UnknownSessionAnswer:
    """A row: ``method`` naming an unknown session, and what the agent may answer."""

    #: The id of the rule the row judges.
    rule: str
    method: str
    #: Success is right too: closing or deleting what is not there is already done.
    idempotent: bool = False
    #: The request carries cwd and mcpServers, as a load, resume or fork does.
    opens: bool = True


UNKNOWN_SESSION_ANSWERS: tuple[UnknownSessionAnswer, ...] = (
    UnknownSessionAnswer(
        "session.load-unknown-id",
        "session/load",
    ),
    UnknownSessionAnswer(
        "session.resume-unknown-id",
        "session/resume",
    ),
    UnknownSessionAnswer(
        "session.close-unknown-id",
        "session/close",
        idempotent=True,
        opens=False,
    ),
    UnknownSessionAnswer(
        "session.delete-unknown-id",
        "session/delete",
        idempotent=True,
        opens=False,
    ),
    UnknownSessionAnswer(
        "session.fork-unknown-id",
        "session/fork",
    ),
)


async def _unknown_session_answered(ctx: CheckContext, row: UnknownSessionAnswer) -> Outcome:
    """The one check body of the table."""
    run = await ctx.agent()
    params: dict[str, Any] = {"sessionId": UNKNOWN_SESSION}
    if row.opens:
        params |= {"cwd": str(ctx.work), "mcpServers": []}
    response = await run.live.request(row.method, params)
    what = f"{row.method} of an unknown session"
    if row.idempotent and not response.is_error:
        return passed(f"{what}: success (idempotent)", frames=exchange_frames(response))
    return expect_error(response, UNKNOWN_SESSION_CODES, what)


register_family(UNKNOWN_SESSION_ANSWERS, SESSIONS, _unknown_session_answered, module=__name__)
