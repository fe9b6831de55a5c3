"""version.v2-* (cancel): protocol version 2's cancellation details beyond "a cancel ends
the turn cancelled" (which :mod:`.v2_turns` judges): a ``session/cancel`` that carries
``_meta`` is still a cancel and is never answered, and the stop reasons an agent reports are
ACP's own or ``_``-prefixed."""

from __future__ import annotations

from ..harness.recorder import Frame
from ..judges.run_walk import session_updates
from ..outcomes import Outcome, failed, passed
from ..scenarios.check_context import CheckContext
from ..scenarios.observed_checks import check_given
from ..scenarios.v2_agent import V2_SCENARIO, EchoTurn, echo_turn
from ..v2_drafts import ERROR_STOP_REASON_DRAFTS
from .cancelled_turns import V2_CANCEL_META, judge_cut_turn
from .families import register_family

#: The stop reasons every v2 draft names; anything else must be a ``_`` extension.
KNOWN_STOP_REASONS = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}
)


def known_stop_reasons(draft: str) -> frozenset[str]:
    """The stop reasons ``draft`` names: the newest adds ``error`` (a turn that failed)."""
    if ERROR_STOP_REASON_DRAFTS.covers(draft):
        return KNOWN_STOP_REASONS | {"error"}
    return KNOWN_STOP_REASONS


# A cancel that carries _meta: a row of the cut-turn family (:mod:`.cancelled_turns`).
register_family(V2_CANCEL_META, V2_SCENARIO, judge_cut_turn, module=__name__)


def _bad_stop_reasons(frames: list[Frame], draft: str) -> list[tuple[int, object]]:
    known = known_stop_reasons(draft)
    found = []
    for frame, _, update in session_updates(frames):
        if update.get("sessionUpdate") != "state_update":
            continue
        if update.get("state") != "idle" or "stopReason" not in update:
            continue
        stop = update["stopReason"]
        if stop in known or (isinstance(stop, str) and stop.startswith("_")):
            continue
        found.append((frame.seq, stop))
    return found


# The draft schema only reserves the names ("Values beginning with `_` are reserved for
# implementation-specific extensions"): no MUST sentence, so SHOULD.
@check_given("version.v2-stop-reason-known", V2_SCENARIO, echo_turn)
async def v2_stop_reasons_are_known_or_custom(ctx: CheckContext, obs: EchoTurn) -> Outcome:
    run, _, _, idle = obs
    bad = _bad_stop_reasons(run.frames, ctx.config.v2_draft)
    if bad:
        _, stop = bad[0]
        return failed(
            f"idle stopReason {stop!r} is neither ACP's nor _-prefixed", frames=[s for s, _ in bad]
        )
    return passed("every idle stopReason is ACP's own or _-prefixed", frames=[idle.seq])
