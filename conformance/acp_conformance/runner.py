"""Runs the selected requirements' checks: scenarios (in parallel), then run-wide checks."""

from __future__ import annotations

import contextlib
import time
import traceback

import anyio

from .catalogue import CHECKS, REQUIREMENTS, select
from .config import RunConfig
from .harness.agent_client import AgentExited, AgentOverflow, AgentTimeout
from .harness.remote_http import AccessDenied
from .outcomes import (
    NO_DEADLINE,
    Outcome,
    Verdict,
    failed,
    harness_error,
    not_applicable,
    out_of_scope,
    soft_failed,
)
from .preflight import PreflightFailure, preflight
from .progress import Progress
from .remote_scope import exemption
from .requirements import Check, Requirement, effective
from .run_result import CpuClock, RequirementResult, RunResult, judged
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
from .version_scope import VersionViews

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
    views = VersionViews(record)  # each judge sees the connections of its rule's versions
    for chk, requirement in run_wide:
        reason = _exempt(requirement, config)
        if reason is not None:
            outcomes[chk.requirement].append(out_of_scope(reason))
            continue
        seen = views.for_rule(requirement)
        if isinstance(seen, Outcome):
            outcomes[chk.requirement].append(seen)
            continue
        outcomes[chk.requirement].extend(_run_wide(chk, seen))
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
