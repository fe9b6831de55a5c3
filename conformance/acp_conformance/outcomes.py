"""Verdicts and the outcome a single check produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "not-applicable"
    #: The checker could not reach a verdict (it failed, or the agent could not be set up);
    #: such results make the run inconclusive instead of counting against the agent.
    HARNESS_ERROR = "harness-error"


@dataclass
class Outcome:
    """What one check concluded, with the evidence a reader needs to verify it."""

    verdict: Verdict
    reason: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    #: Frame sequence numbers (in ``run_id``'s transcript) the reason is about.
    frames: list[int] = field(default_factory=list)
    run_id: str | None = None
    check: str = ""
    #: Set on a failure the text behind a MUST requirement does not make blocking (a wait
    #: the spec sets no limit for, a turn of a model the checker does not control): why the
    #: failure is judged as SHOULD. A requirement whose every failure is soft reports SHOULD.
    soft: str | None = None
    #: A not-applicable outcome because the rule does not apply to this agent at all (a
    #: capability it does not advertise, another transport, a protocol version it does not
    #: speak), as opposed to one the run could not exercise (no model given, say).
    scope: bool = False
    #: Wall time the check took, s (set by the runner; where a run's time goes).
    seconds: float | None = None


def passed(reason: str = "", *, frames: list[int] | None = None, **evidence: Any) -> Outcome:
    return Outcome(Verdict.PASS, reason, evidence, frames or [])


def failed(reason: str, *, frames: list[int] | None = None, **evidence: Any) -> Outcome:
    return Outcome(Verdict.FAIL, reason, evidence, frames or [])


def soft_failed(
    reason: str, because: str, *, frames: list[int] | None = None, **evidence: Any
) -> Outcome:
    """A failure judged as SHOULD whatever the requirement's tier, for the reason ``because``."""
    return Outcome(Verdict.FAIL, reason, evidence, frames or [], soft=because)


def soften(outcome: Outcome, because: str) -> Outcome:
    """``outcome`` judged as SHOULD if it is a failure (other verdicts are left alone)."""
    if outcome.verdict is Verdict.FAIL and outcome.soft is None:
        outcome.soft = because
    return outcome


#: Why a wait that ran out is not a MUST failure on its own.
NO_DEADLINE = "ACP sets no time limit for this answer, so a late one is judged as SHOULD"
#: Why a turn of the agent's own model is not a MUST failure.
AGENTS_OWN_MODEL = (
    "under --llm none the turn ran on the agent's own model, which the checker does not "
    "control, so it is judged as SHOULD"
)


def not_applicable(reason: str, **evidence: Any) -> Outcome:
    return Outcome(Verdict.NOT_APPLICABLE, reason, evidence)


def out_of_scope(reason: str, **evidence: Any) -> Outcome:
    """Not applicable because the rule does not apply to this agent (see ``Outcome.scope``)."""
    return Outcome(Verdict.NOT_APPLICABLE, reason, evidence, scope=True)


def harness_error(reason: str, **evidence: Any) -> Outcome:
    return Outcome(Verdict.HARNESS_ERROR, reason, evidence)


#: When several checks feed one requirement, the first verdict in this order wins.
_PRECEDENCE = (Verdict.FAIL, Verdict.HARNESS_ERROR, Verdict.PASS, Verdict.NOT_APPLICABLE)


def combine(outcomes: list[Outcome]) -> Verdict:
    """The requirement's verdict from its checks' outcomes (no outcomes → not applicable)."""
    present = {o.verdict for o in outcomes}
    for verdict in _PRECEDENCE:
        if verdict in present:
            return verdict
    return Verdict.NOT_APPLICABLE
