"""Unknown session ids: every method that names a session must refuse one it never issued
(-32602, or -32002), or, for close and delete, may treat it as already done.

The single-method answers are one table (:data:`UNKNOWN_SESSION_ANSWERS`), each row its own
requirement judged by one body (:func:`_unknown_session_answered`); the prompt, set_mode and
set_config_option probes are one requirement with its own check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..citations import ERROR_CODES, house
from ..outcomes import Outcome, failed, passed
from ..requirements import Requirement, Tier, requirement
from ..scenarios._expect import UNKNOWN_SESSION_CODES, expect_error
from ..scenarios.catalog import SESSIONS
from ..scenarios.check_context import CheckContext, advertised, surface_value, text_prompt
from .families import register_family
from .session_steps import UNKNOWN_SESSION, exchange_frames

#: The citation of the rules that fix the error code for an unknown session.
_UNKNOWN_CODE_RULE = house("-32602 (or -32002) for an unknown session", ERROR_CODES)


@requirement(
    "session.unknown-id-rejected",
    Tier.MUST,
    "prompt, set_mode and set_config_option naming an unknown session get -32602 (or -32002).",
    _UNKNOWN_CODE_RULE,
    scenario=SESSIONS,
    house=True,
)
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

    rule: Requirement
    method: str
    #: Success is right too: closing or deleting what is not there is already done.
    idempotent: bool = False
    #: The request carries cwd and mcpServers, as a load, resume or fork does.
    opens: bool = True


_SESSION_CAPS = "agentCapabilities.sessionCapabilities"


def _rule(id: str, statement: str, gate: str, citation: str = _UNKNOWN_CODE_RULE) -> Requirement:
    """Every row is a CAPABILITY house rule, gated by the capability the method comes with."""
    return Requirement(id, Tier.CAPABILITY, statement, citation, gate=gate, house=True)


UNKNOWN_SESSION_ANSWERS: tuple[UnknownSessionAnswer, ...] = (
    UnknownSessionAnswer(
        _rule(
            "session.load-unknown-id",
            "session/load of an unknown session id is rejected with -32602 (or -32002).",
            "agentCapabilities.loadSession",
        ),
        "session/load",
    ),
    UnknownSessionAnswer(
        _rule(
            "session.resume-unknown-id",
            "session/resume of an unknown session id is rejected with -32602 (or -32002).",
            f"{_SESSION_CAPS}.resume",
        ),
        "session/resume",
    ),
    UnknownSessionAnswer(
        _rule(
            "session.close-unknown-id",
            "session/close of an unknown id succeeds (idempotent) or fails with -32602 "
            "(or -32002).",
            f"{_SESSION_CAPS}.close",
            house("close is idempotent or -32602", ERROR_CODES),
        ),
        "session/close",
        idempotent=True,
        opens=False,
    ),
    UnknownSessionAnswer(
        _rule(
            "session.delete-unknown-id",
            "session/delete of an unknown id succeeds (idempotent) or fails with -32602.",
            f"{_SESSION_CAPS}.delete",
            house("delete is idempotent or -32602", ERROR_CODES),
        ),
        "session/delete",
        idempotent=True,
        opens=False,
    ),
    UnknownSessionAnswer(
        _rule(
            "session.fork-unknown-id",
            "session/fork of an unknown session id is rejected with -32602 (or -32002).",
            f"{_SESSION_CAPS}.fork",
        ),
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
