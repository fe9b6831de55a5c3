"""What a run found: each requirement's result (:class:`RequirementResult`, combined from its
outcomes by :func:`judged`), the checker's CPU use, and the whole run's :class:`RunResult`
that every report reads. Kept apart from the runner so that reports need no checks."""

from __future__ import annotations

import resource
from dataclasses import dataclass, field, replace
from typing import Any

from .config import RunConfig
from .outcomes import (
    Outcome,
    Verdict,
    combine,
)
from .preflight import PreflightFailure
from .requirements import Requirement, Tier
from .scenarios.agent_run import (
    AgentRun,
)


@dataclass
class RequirementResult:
    requirement: Requirement
    verdict: Verdict
    outcomes: list[Outcome]
    #: "expected" (a known failure from the baseline), "stale" (baselined but no longer
    #: failing) or None.
    baseline: str | None = None
    baseline_reason: str | None = None
    #: A blocking requirement reported as SHOULD because every failure was soft.
    softened: bool = False

    @property
    def exercised(self) -> bool:
        """Whether the checks reached a verdict on the agent (pass or fail)."""
        return self.verdict in (Verdict.PASS, Verdict.FAIL)

    @property
    def out_of_scope(self) -> bool:
        """Not applicable only because the rule does not apply to this agent."""
        return (
            self.verdict is Verdict.NOT_APPLICABLE
            and bool(self.outcomes)
            and all(o.scope for o in self.outcomes)
        )

    @property
    def reason(self) -> str:
        for outcome in self.outcomes:
            if outcome.verdict is self.verdict and outcome.reason:
                return outcome.reason
        return ""


@dataclass
class CpuUse:
    """CPU seconds (user + system) a run cost: the agent processes it started (and whatever
    they waited for) and the checker itself, scripted model server included."""

    agents: float
    checker: float

    def to_json(self) -> dict[str, float]:
        return {"agents": round(self.agents, 2), "checker": round(self.checker, 2)}


class CpuClock:
    """Measures `CpuUse` from here on. Agent processes count once the checker has reaped
    them (``RUSAGE_CHILDREN``), which the shutdown ladder does for every one it started; an
    agent's own children count when the agent waited for them, and the ones it left behind
    through what the ladder read before killing them (``ExitRecord.leftover_cpu``)."""

    def __init__(self) -> None:
        self._start = self._now()

    @staticmethod
    def _now() -> tuple[float, float]:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = resource.getrusage(resource.RUSAGE_SELF)
        return children.ru_utime + children.ru_stime, own.ru_utime + own.ru_stime

    def read(self, leftover: float = 0.0) -> CpuUse:
        agents, checker = self._now()
        return CpuUse(agents - self._start[0] + leftover, checker - self._start[1])


@dataclass
class RunResult:
    config: RunConfig
    results: dict[str, RequirementResult]
    runs: list[AgentRun]
    started: float
    duration: float
    agent_info: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    #: Set when the preflight initialize failed and no scenario ran.
    aborted: PreflightFailure | None = None
    #: CPU seconds the run cost (see `CpuClock`), when measured.
    cpu: CpuUse | None = None

    def counted(self, verdict: Verdict, *, blocking: bool | None = None) -> list[RequirementResult]:
        return [
            r
            for r in self.results.values()
            if r.verdict is verdict
            and r.baseline != "expected"
            and (blocking is None or r.requirement.blocking == blocking)
        ]

    @property
    def stale(self) -> list[RequirementResult]:
        return [r for r in self.results.values() if r.baseline == "stale"]

    @property
    def blocking_failures(self) -> list[RequirementResult]:
        return self.counted(Verdict.FAIL, blocking=True)

    @property
    def harness_errors(self) -> list[RequirementResult]:
        return self.counted(Verdict.HARNESS_ERROR)

    def _blocking(self) -> list[RequirementResult]:
        """The MUST and CAPABILITY requirements (those reported as SHOULD after soft failures
        included) that apply to this agent."""
        return [
            r
            for r in self.results.values()
            if (r.requirement.blocking or r.softened) and not r.out_of_scope
        ]

    @property
    def coverage(self) -> tuple[int, int]:
        """(exercised, applicable) MUST/CAPABILITY requirements: exercised means a pass or a
        fail; applicable leaves out those that do not apply to this agent at all."""
        applicable = self._blocking()
        return sum(1 for r in applicable if r.exercised), len(applicable)

    @property
    def unexercised(self) -> list[RequirementResult]:
        """Applicable MUST/CAPABILITY requirements the run could not judge (not applicable
        for a reason of the run's, such as no model): ``--strict-coverage`` fails on them."""
        return [r for r in self._blocking() if r.verdict is Verdict.NOT_APPLICABLE]

    @property
    def status(self) -> str:
        if self.aborted is not None:
            failed_agent = self.aborted.verdict is Verdict.FAIL
            return "not-conformant" if failed_agent else "inconclusive"
        if self.blocking_failures or self.stale:
            return "not-conformant"
        if self.config.strict_coverage and self.unexercised:
            return "not-conformant"
        if self.harness_errors:
            return "inconclusive"
        return "conformant"

    @property
    def exit_code(self) -> int:
        return {"conformant": 0, "not-conformant": 1, "inconclusive": 3}[self.status]

    def verdict_line(self) -> str:
        if self.aborted is not None:
            head = "NOT CONFORMANT" if self.status == "not-conformant" else "INCONCLUSIVE"
            charged = f"{self.aborted.requirement}: " if self.aborted.requirement else ""
            return f"{head}: {charged}{self.aborted.outcome.reason}"
        must = sum(1 for r in self.blocking_failures if r.requirement.tier.value == "MUST")
        gated = len(self.blocking_failures) - must
        parts = []
        if must:
            parts.append(f"{must} MUST failure{'s' * (must != 1)}")
        if gated:
            parts.append(f"{gated} capability failure{'s' * (gated != 1)}")
        if self.stale:
            parts.append(
                f"{len(self.stale)} stale baseline entr{'ies' if len(self.stale) != 1 else 'y'}"
            )
        if self.config.strict_coverage and self.unexercised:
            parts.append(
                f"{len(self.unexercised)} MUST/CAPABILITY not exercised (--strict-coverage)"
            )
        should = len(self.counted(Verdict.FAIL, blocking=False))
        extra = []
        if should:
            extra.append(f"{should} SHOULD/INFO failures")
        if self.harness_errors:
            extra.append(f"{len(self.harness_errors)} harness errors")
        tail = f" ({', '.join(extra)})" if extra else ""
        done, applicable = self.coverage
        exercised = f" — {done} of {applicable} MUST/CAPABILITY exercised" if applicable else ""
        if self.status == "not-conformant":
            return "NOT CONFORMANT: " + ", ".join(parts) + tail + exercised
        if self.status == "inconclusive":
            return "INCONCLUSIVE: " + ", ".join(extra) + exercised
        return "CONFORMANT" + tail + exercised


def judged(requirement: Requirement, outcomes: list[Outcome]) -> RequirementResult:
    """The requirement's result: a blocking requirement whose every failure is soft (see
    :attr:`Outcome.soft`) is reported as SHOULD, with the reason on its outcomes. A house rule
    is left as it is: its strictness, time limits included, is the project's own, and it
    blocks only under ``--profile iac-code``."""
    verdict = combine(outcomes)
    failures = [o for o in outcomes if o.verdict is Verdict.FAIL]
    if (
        requirement.blocking
        and not requirement.house
        and failures
        and all(o.soft for o in failures)
    ):
        requirement = replace(requirement, tier=Tier.SHOULD)
        for outcome in failures:
            if outcome.soft and outcome.soft not in outcome.reason:
                outcome.reason = f"{outcome.reason} ({outcome.soft})"
        return RequirementResult(requirement, verdict, outcomes, softened=True)
    return RequirementResult(requirement, verdict, outcomes)
