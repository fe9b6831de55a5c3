"""Runs the selected requirements' checks: scenarios (in parallel), then run-wide checks."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from . import scenarios as _scenarios  # noqa: F401  (registers every check)
from .config import RunConfig
from .harness.connection import AgentExited, AgentTimeout
from .harness.remote import AccessDenied
from .outcomes import Outcome, Verdict, combine, failed, harness_error, not_applicable
from .remote_scope import exemption
from .requirements import CHECKS, REQUIREMENTS, Check, Requirement, select
from .scenarios.base import (
    SCENARIOS,
    AgentRun,
    CheckContext,
    RunRecord,
    ScenarioRuntime,
    SetupError,
    advertised,
    surface_value,
)
from .scenarios.gating import BASELINE
from .validation import SchemaUnavailable, load_backend

#: Called with (scenario name, number done, number of scenarios, outcomes of that scenario).
Progress = Callable[[str, int, int, list[Outcome]], None]


@dataclass
class RequirementResult:
    requirement: Requirement
    verdict: Verdict
    outcomes: list[Outcome]
    #: "expected" (a known failure from the baseline), "stale" (baselined but no longer
    #: failing) or None.
    baseline: str | None = None
    baseline_reason: str | None = None

    @property
    def reason(self) -> str:
        for outcome in self.outcomes:
            if outcome.verdict is self.verdict and outcome.reason:
                return outcome.reason
        return ""


@dataclass
class RunResult:
    config: RunConfig
    results: dict[str, RequirementResult]
    runs: list[AgentRun]
    started: float
    duration: float
    agent_info: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

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

    @property
    def status(self) -> str:
        if self.blocking_failures or self.stale:
            return "not-conformant"
        if self.harness_errors:
            return "inconclusive"
        return "conformant"

    @property
    def exit_code(self) -> int:
        return {"conformant": 0, "not-conformant": 1, "inconclusive": 3}[self.status]

    def verdict_line(self) -> str:
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
        should = len(self.counted(Verdict.FAIL, blocking=False))
        extra = []
        if should:
            extra.append(f"{should} SHOULD/INFO failures")
        if self.harness_errors:
            extra.append(f"{len(self.harness_errors)} harness errors")
        tail = f" ({', '.join(extra)})" if extra else ""
        if self.status == "not-conformant":
            return "NOT CONFORMANT: " + ", ".join(parts) + tail
        if self.status == "inconclusive":
            return "INCONCLUSIVE: " + ", ".join(extra)
        return "CONFORMANT" + tail


def _plan(requirements: list[Requirement]) -> tuple[dict[str, list[Check]], list[Check]]:
    wanted = {r.id for r in requirements}
    by_scenario: dict[str, list[Check]] = {}
    run_wide: list[Check] = []
    for chk in CHECKS:
        if chk.requirement not in wanted:
            continue
        if chk.scenario is None:
            run_wide.append(chk)
        else:
            by_scenario.setdefault(chk.scenario, []).append(chk)
    if run_wide and BASELINE not in by_scenario:
        # The run-wide checks need traffic to judge; the baseline turn is the minimum.
        by_scenario[BASELINE] = [c for c in CHECKS if c.scenario == BASELINE]
    # Longest first: the plan's order is the order scenarios get a job slot.
    names = sorted(
        (name for name in SCENARIOS if name in by_scenario),
        key=lambda name: -SCENARIOS[name].weight,
    )
    return {name: by_scenario[name] for name in names}, run_wide


async def _gate(ctx: CheckContext) -> Outcome | None:
    req = ctx.requirement
    if (reason := exemption(req, ctx.config)) is not None:
        return not_applicable(reason)
    if req.llm and ctx.config.llm == "none":
        return not_applicable("needs a scripted LLM (--llm anthropic|openai)")
    if req.gate is None:
        return None
    try:
        surface = await ctx.surface()
    except (AgentTimeout, AgentExited) as exc:
        raise SetupError(f"could not read the advertised capabilities: {exc}") from exc
    if not advertised(surface_value(surface, req.gate)):
        return not_applicable(f"{req.gate} is not advertised")
    return None


async def _run_check(chk: Check, runtime: ScenarioRuntime) -> Outcome:
    ctx = CheckContext(runtime, REQUIREMENTS[chk.requirement])
    budget = runtime.config.timeout * getattr(chk.func, "budget_factor", 10)
    try:
        with anyio.fail_after(budget):
            outcome = await _gate(ctx) or await chk.func(ctx)
    except TimeoutError:
        outcome = harness_error(f"the check did not finish within its {budget:g} s budget")
    except (AgentTimeout, AgentExited) as exc:
        outcome = failed(str(exc))
    except (SetupError, AccessDenied) as exc:
        outcome = harness_error(f"setup failed: {exc}")
    except Exception as exc:  # a bug in the checker, never the agent's fault
        outcome = harness_error(
            f"checker error: {type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=8)
        )
    outcome.check = chk.name
    if outcome.run_id is None and ctx.current is not None:
        outcome.run_id = ctx.current.id
    return outcome


async def _run_scenario(
    name: str, checks: list[Check], config: RunConfig
) -> tuple[list[AgentRun], list[tuple[Check, Outcome]]]:
    results: list[tuple[Check, Outcome]] = []
    async with anyio.create_task_group() as tg:
        runtime = ScenarioRuntime(config, SCENARIOS[name], tg)
        try:
            for chk in checks:
                results.append((chk, await _run_check(chk, runtime)))
        finally:
            await runtime.close()
            tg.cancel_scope.cancel()
    return runtime.runs, results


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


async def execute(config: RunConfig, progress: Progress | None = None) -> RunResult:
    started = time.time()
    clock = time.monotonic()
    requirements = select(config.only)
    plan, run_wide = _plan(requirements)
    limiter = anyio.CapacityLimiter(max(1, config.jobs))
    outcomes: dict[str, list[Outcome]] = {r.id: [] for r in requirements}
    runs: list[AgentRun] = []
    done = 0

    async def one(name: str, checks: list[Check]) -> None:
        nonlocal done
        async with limiter:
            scenario_runs, results = await _run_scenario(name, checks, config)
        runs.extend(scenario_runs)
        for chk, outcome in results:
            if chk.requirement in outcomes:
                outcomes[chk.requirement].append(outcome)
        done += 1
        if progress is not None:
            progress(name, done, len(plan), [o for _, o in results])

    async with anyio.create_task_group() as tg:
        for name, checks in plan.items():
            tg.start_soon(one, name, checks)

    runs.sort(key=lambda run: (list(SCENARIOS).index(run.scenario), run.id))
    record = RunRecord(config, runs)
    try:
        record.backend = load_backend()
    except SchemaUnavailable as exc:
        record.backend_error = str(exc)
    for chk in run_wide:
        reason = exemption(REQUIREMENTS[chk.requirement], config)
        if reason is not None:
            outcomes[chk.requirement].append(not_applicable(reason))
            continue
        outcomes[chk.requirement].extend(_run_wide(chk, record))

    results = {
        req.id: RequirementResult(req, combine(outcomes[req.id]), outcomes[req.id])
        for req in requirements
    }
    agent_info = next(
        (
            run.init_result.get("agentInfo")
            for run in runs
            if run.init_result and run.init_result.get("agentInfo")
        ),
        None,
    )
    return RunResult(config, results, runs, started, time.monotonic() - clock, agent_info)
