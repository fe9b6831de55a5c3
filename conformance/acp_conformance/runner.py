"""Runs the selected requirements' checks: scenarios (in parallel), then run-wide checks."""

from __future__ import annotations

import contextlib
import resource
import time
import traceback
from dataclasses import dataclass, field, replace
from typing import Any

import anyio

from .catalogue import CHECKS, REQUIREMENTS, select
from .config import RunConfig
from .harness.agent_client import AgentExited, AgentOverflow, AgentTimeout
from .harness.remote import AccessDenied
from .outcomes import (
    NO_DEADLINE,
    Outcome,
    Verdict,
    combine,
    failed,
    harness_error,
    not_applicable,
    out_of_scope,
    soft_failed,
)
from .preflight import PreflightFailure, preflight
from .progress import Progress
from .remote_scope import exemption
from .requirements import Check, Requirement, Tier, effective
from .scenarios.agent_run import (
    SCENARIOS,
    AgentRun,
    RunEvidence,
    RunRecord,
    SetupError,
    advertised,
    surface_value,
)
from .scenarios.catalog import BASELINE
from .scenarios.check_context import CheckContext
from .scenarios.prompt_turns import UNREACHABLE_MODEL
from .scenarios.runtime import ScenarioRuntime
from .v2_drafts import draft_exemption
from .validation import SchemaUnavailable, load_backend


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


#: A check with the requirement it judges, as the run's rule profile judges it.
Planned = tuple[Check, Requirement]


def _plan(
    requirements: list[Requirement], profile: str
) -> tuple[dict[str, list[Planned]], list[Planned]]:
    """The selected requirements' checks, per scenario and run-wide, each paired with its
    requirement once here (the baseline checks pulled in for the run-wide judges too)."""
    chosen = {r.id: r for r in requirements}
    by_scenario: dict[str, list[Planned]] = {}
    run_wide: list[Planned] = []
    for chk in CHECKS:
        req = chosen.get(chk.requirement)
        if req is None:
            continue
        if chk.scenario is None:
            run_wide.append((chk, req))
        else:
            by_scenario.setdefault(chk.scenario, []).append((chk, req))
    if run_wide and BASELINE not in by_scenario:
        # The run-wide judges need traffic to judge; the baseline turn is the minimum. Its
        # checks may be unselected: they are judged, but only selected ones are reported.
        by_scenario[BASELINE] = [
            (c, chosen.get(c.requirement) or effective(REQUIREMENTS[c.requirement], profile))
            for c in CHECKS
            if c.scenario == BASELINE
        ]
    # Longest first: the plan's order is the order scenarios get a job slot.
    names = sorted(
        (name for name in SCENARIOS if name in by_scenario),
        key=lambda name: -SCENARIOS[name].weight,
    )
    return {name: by_scenario[name] for name in names}, run_wide


def _exempt(req: Requirement, config: RunConfig) -> str | None:
    """Why ``req`` does not apply to this run: its transport, or the v2 draft it grades."""
    return exemption(req, config) or draft_exemption(req.drafts, config.v2_draft)


async def _gate(ctx: CheckContext) -> Outcome | None:
    req = ctx.requirement
    if (reason := _exempt(req, ctx.config)) is not None:
        return out_of_scope(reason)
    if req.llm and ctx.config.llm == "none":
        return not_applicable("needs a scripted LLM (--llm anthropic|openai)")
    if req.gate is None:
        return None
    try:
        surface = await ctx.surface()
    except (AgentTimeout, AgentExited) as exc:
        raise SetupError(f"could not read the advertised capabilities: {exc}") from exc
    if not advertised(surface_value(surface, req.gate)):
        return out_of_scope(f"{req.gate} is not advertised")
    return None


def _timed_out(exc: AgentTimeout, ctx: CheckContext) -> Outcome:
    """A wait that ran out is the agent's failure, but only at SHOULD: ACP sets no time limit,
    so a late answer is not a broken MUST (checks that can show the agent answered later
    requests instead judge that themselves). A prompt under ``--llm none`` is not judged at
    all: the agent's model is then unreachable, and whether its turn ever ends says nothing
    about ACP (checks that cancel the turn judge the answer to the cancel themselves)."""
    if exc.null_id_error is not None:
        # Answered, but without the request's id: a wrong answer, not a late one.
        return failed(str(exc), frames=[exc.null_id_error.seq])
    if exc.method == "session/prompt" and ctx.config.llm == "none":
        return not_applicable(f"{ctx.turn_hung(exc)}; {UNREACHABLE_MODEL}")
    return soft_failed(str(exc), NO_DEADLINE)


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


async def _run_check(chk: Check, requirement: Requirement, runtime: ScenarioRuntime) -> Outcome:
    ctx = CheckContext(runtime, requirement)
    budget = runtime.config.timeout * chk.budget
    began = time.monotonic()
    try:
        with anyio.fail_after(budget):
            outcome = await _gate(ctx) or await chk.func(ctx)
    except TimeoutError:
        outcome = harness_error(f"the check did not finish within its {budget:g} s budget")
    except AgentTimeout as exc:
        outcome = _timed_out(exc, ctx)
    except AgentExited as exc:
        outcome = failed(str(exc))
    except (SetupError, AccessDenied) as exc:
        if isinstance(exc.__cause__, AgentOverflow):
            # The agent's output went over the checker's bounds while being set up: the
            # agent's failure (transport.output-bounded), not the harness's.
            outcome = failed(str(exc.__cause__))
        else:
            outcome = harness_error(f"setup failed: {exc}")
    except Exception as exc:  # a bug in the checker, never the agent's fault
        outcome = harness_error(
            f"checker error: {type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=8)
        )
    outcome.check = chk.name
    outcome.seconds = round(time.monotonic() - began, 3)
    if outcome.run_id is None and ctx.current is not None:
        outcome.run_id = ctx.current.id
    for run in ctx.own_runs:
        runtime.release(run)
    return outcome


async def _run_scenario(
    name: str,
    checks: list[Planned],
    config: RunConfig,
    progress: Progress,
    evidence: RunEvidence,
    slot: contextlib.AbstractAsyncContextManager[object],
) -> tuple[list[AgentRun], list[tuple[Check, Outcome]]]:
    """Run one scenario's checks in order, holding ``slot``, then stop its processes and
    remove its sandbox. The slot is given back before the stopping: the ladder's waits (an
    agent that ignores stdin EOF, as claude-agent-acp does, costs ~1 s per process) need
    none, so the next scenario starts meanwhile."""
    results: list[tuple[Check, Outcome]] = []
    async with anyio.create_task_group() as tg:
        runtime = ScenarioRuntime(config, SCENARIOS[name], tg, evidence)
        try:
            async with slot:
                await _run_checks(checks, runtime, progress, results)
        finally:
            await runtime.close()
            tg.cancel_scope.cancel()
    return runtime.runs, results


async def _run_checks(
    checks: list[Planned],
    runtime: ScenarioRuntime,
    progress: Progress,
    results: list[tuple[Check, Outcome]],
) -> None:
    """Each check in turn, its outcome appended to ``results`` as it comes."""
    name = runtime.scenario.name
    for chk, requirement in checks:
        progress.check_started(name, chk.requirement)
        flooded = next((run for run in runtime.runs if run.recorder.overflow), None)
        if flooded is not None:
            # The agent's output went over the checker's bounds: the scenario ends there,
            # with that verdict (transport.output-bounded), not one failure per check.
            outcome = not_applicable(
                f"not run: the checker stopped reading {flooded.id} (see transport.output-bounded)"
            )
            outcome.check = chk.name
            results.append((chk, outcome))
            continue
        outcome = await _run_check(chk, requirement, runtime)
        if outcome.verdict in (Verdict.FAIL, Verdict.HARNESS_ERROR):
            # Whatever went wrong may linger in that process: a later check that would
            # reuse it (the turn agent, say) gets a fresh one instead, so one failure
            # stays one.
            runtime.retire(outcome.run_id)
        results.append((chk, outcome))


def _run_wide(chk: Check, record: RunRecord) -> list[Outcome]:
    try:
        produced = chk.func(record)
    except Exception as exc:
        produced = harness_error(
            f"checker error: {type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=8)
        )
    outcomes = produced if isinstance(produced, list) else [produced]
    for outcome in outcomes:
        outcome.check = chk.name
    return outcomes


def _aborted(
    config: RunConfig, failure: PreflightFailure, started: float, clock: float
) -> RunResult:
    """The result of a run the preflight stopped: one verdict, charged to a requirement when
    it is the agent's fault (a mangled id), else a harness verdict for the whole run."""
    results: dict[str, RequirementResult] = {}
    if failure.requirement is not None:
        req = effective(REQUIREMENTS[failure.requirement], config.profile)
        results[req.id] = RequirementResult(req, failure.verdict, [failure.outcome])
    runs = [failure.run] if failure.run is not None else []
    result = RunResult(config, results, runs, started, time.monotonic() - clock)
    result.aborted = failure
    return result


async def execute(config: RunConfig, progress: Progress | None = None) -> RunResult:
    if config.traceparent and config.trace_receiver is None:
        # --traceparent: agents this run starts send their traces here (see agent_environment).
        from .trace_receiver import running_receiver

        with running_receiver() as receiver:
            config.trace_receiver = receiver
            try:
                return await execute(config, progress)
            finally:
                config.trace_receiver = None
    started = time.time()
    clock = time.monotonic()
    cpu = CpuClock()
    progress = progress or Progress()
    requirements = select(config.only, config.profile)
    plan, run_wide = _plan(requirements, config.profile)
    progress.started(requirements, list(plan))
    # Remote runs have their own first contact (a refused token or URL is a setup error of
    # the run); the preflight speaks to a process over stdio.
    evidence = RunEvidence()
    failure = await preflight(config, evidence) if config.remote is None else None
    if failure is not None:
        progress.finished()
        return _aborted(config, failure, started, clock)
    limiter = anyio.CapacityLimiter(max(1, config.jobs))
    outcomes: dict[str, list[Outcome]] = {r.id: [] for r in requirements}
    runs: list[AgentRun] = []

    async def one(name: str, checks: list[Planned]) -> None:
        # Under --llm none a turn scenario mostly waits: its prompts go to an unreachable
        # model, so it learns by silence (see HUNG_TURN_BOUND). Such waits run beside the
        # --jobs scenarios rather than in one of their slots, where they would hold up
        # scenarios that compute (gemini-cli: 82 s alone, three 30 s waits one after another).
        waits = config.llm == "none" and SCENARIOS[name].llm
        slot = contextlib.nullcontext() if waits else limiter
        scenario_runs, results = await _run_scenario(name, checks, config, progress, evidence, slot)
        runs.extend(scenario_runs)
        for chk, outcome in results:
            if chk.requirement in outcomes:
                outcomes[chk.requirement].append(outcome)
        progress.scenario_done(name, [(chk.requirement, o) for chk, o in results])

    async with anyio.create_task_group() as tg:
        for name, checks in plan.items():
            tg.start_soon(one, name, checks)

    runs.sort(key=lambda run: (list(SCENARIOS).index(run.scenario), run.id))
    record = RunRecord(config, runs)
    try:
        record.backend = load_backend()
    except SchemaUnavailable as exc:
        record.backend_error = str(exc)
    for chk, requirement in run_wide:
        reason = _exempt(requirement, config)
        if reason is not None:
            outcomes[chk.requirement].append(out_of_scope(reason))
            continue
        outcomes[chk.requirement].extend(_run_wide(chk, record))
    results = {req.id: judged(req, outcomes[req.id]) for req in requirements}
    progress.finished({rid: item.verdict.value for rid, item in results.items()})

    agent_info = next(
        (
            run.init_result.get("agentInfo")
            for run in runs
            if run.init_result and run.init_result.get("agentInfo")
        ),
        None,
    )
    result = RunResult(config, results, runs, started, time.monotonic() - clock, agent_info)
    result.cpu = cpu.read(sum(run.exit.leftover_cpu for run in runs if run.exit is not None))
    return result
