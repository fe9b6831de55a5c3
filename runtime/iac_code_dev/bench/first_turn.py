"""What a user of a freshly started agent waits for: ``cold_new``, ``prompt_idle``,
``cold_prompt`` and ``preload_load``.

- ``cold_new``: ``session/new`` sent the moment the ``initialize`` answer arrives, in a fresh
  process (editors do exactly this) → its answer.
- ``prompt_idle``: a fresh process, ``initialize`` and ``session/new``, then 3 s of nothing
  (the user reads the screen and types), then a prompt: its first ``agent_message_chunk``
  measured from the moment the scripted model starts to stream its answer.
- ``cold_prompt``: spawn → first ``agent_message_chunk`` with ``initialize``, ``session/new``
  and the prompt sent back to back; with ``--compare`` the other agent runs the same steps in
  the same loop (ours, theirs, ours, ...), e.g. claude-agent-acp.
- ``preload_load``: requests answered while the model SDK loads in the background, against
  the same requests once it is loaded (the preload must not slow answers beyond 2x).
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass

from acp_scripted_llm import Turn
from iac_code.llm.preload import QUIET_SECONDS

from ._client import AgentProcess, HarnessError, Incoming
from .context import (
    INITIALIZE_PARAMS,
    BenchContext,
    Workspace,
    initialize,
    new_session,
    prompt_params,
    text_of,
    wait_until_ready,
)
from .llm import scripted_llm
from .procinfo import cpu_seconds
from .results import Row, at_most, ms, ms_samples, summarize, timing_text

IDLE_SECONDS = 3.0
PROMPT_IDLE_TARGET = 0.030
COLD_NEW_TARGET = 0.030
COLD_PROMPT_RATIO = 0.5
PRELOAD_RATIO = 2.0
PRELOAD_REQUESTS = 30
PRELOAD_GAP = 0.02
_PROMPT_TIMEOUT = 120.0
_ANSWER = Turn().text("Plans first, then apply.", chunks=3).to_dict()


def _first_chunk(incoming: Incoming) -> bool:
    return text_of(incoming.update) is not None


def _runs(ctx: BenchContext, most: int) -> int:
    return max(1, min(ctx.repeat, most))


# -- cold_new ---------------------------------------------------------------------------


def run_cold_new(ctx: BenchContext) -> list[Row]:
    samples: list[float] = []
    for _ in range(_runs(ctx, 10)):
        workspace = ctx.workspace("cold_new")
        with ctx.spawn(workspace) as agent:
            initialize(agent, ctx.timeout)
            reply = agent.request(
                "session/new",
                {"cwd": str(workspace.project), "mcpServers": []},
                timeout=ctx.timeout,
                keep=lambda _incoming: False,
            )
            if reply.error is not None:
                raise HarnessError(f"session/new failed: {reply.error}")
            samples.append(reply.seconds)
    summary = summarize(samples)
    return [
        Row(
            metric="cold_new",
            value=timing_text(summary),
            target="≤ 30 ms median",
            verdict=at_most(summary.median, COLD_NEW_TARGET),
            notes="fresh process each run: session/new written when the initialize answer"
            " arrives → its answer",
            data={"seconds": summary.as_dict(), "samples_ms": ms_samples(samples)},
        )
    ]


# -- prompt_idle ------------------------------------------------------------------------


def run_prompt_idle(ctx: BenchContext) -> list[Row]:
    beyond: list[float] = []
    raw: list[float] = []
    with scripted_llm(_ANSWER) as (server, turns):
        for _ in range(_runs(ctx, 5)):
            workspace = ctx.workspace("prompt_idle")
            with ctx.spawn(workspace, llm_url=server.url) as agent:
                initialize(agent, ctx.timeout)
                session_id = new_session(agent, workspace.project, ctx.timeout)
                time.sleep(IDLE_SECONDS)  # the user reads and types; the agent is idle
                before = len(turns.stamps)
                reply = agent.request(
                    "session/prompt",
                    prompt_params(session_id, "what does this plan change?"),
                    timeout=_PROMPT_TIMEOUT,
                    keep=_first_chunk,
                )
                if reply.error is not None or not reply.between:
                    raise HarnessError(f"the prompt gave no chunk: {reply.error}")
                if len(turns.stamps) != before + 1:
                    raise HarnessError("expected exactly one model request for the prompt")
                beyond.append(reply.between[0].at - turns.stamps[-1])
                raw.append(reply.between[0].at - reply.sent)
    summary = summarize(beyond)
    return [
        Row(
            metric="prompt_idle",
            value=timing_text(summary),
            target="≤ 30 ms after the model's first byte",
            verdict=at_most(summary.median, PROMPT_IDLE_TARGET),
            notes=f"fresh process, prompt {IDLE_SECONDS:.0f} s after session/new; prompt → first"
            f" chunk median {ms(summarize(raw).median)} (includes the local model's latency)",
            data={
                "beyond_model_seconds": summary.as_dict(),
                "beyond_samples_ms": ms_samples(beyond),
                "raw_samples_ms": ms_samples(raw),
            },
        )
    ]


# -- cold_prompt ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _ColdRun:
    to_chunk: float  # spawn → first agent_message_chunk
    to_initialize: float
    to_session: float


def _cold_once(agent: AgentProcess, workspace: Workspace, timeout: float) -> _ColdRun:
    request_id, _ = agent.send_request("initialize", INITIALIZE_PARAMS)
    init = agent.wait_reply(request_id, agent.spawned_at, timeout)
    if init.error is not None:
        raise HarnessError(f"{shlex.join(agent.argv)}: initialize failed: {init.error}")
    session_id = new_session(agent, workspace.project, timeout)
    session_at = time.monotonic()
    reply = agent.request(
        "session/prompt",
        prompt_params(session_id, "what does this plan change?"),
        timeout=_PROMPT_TIMEOUT,
        keep=_first_chunk,
    )
    if not reply.between:
        raise HarnessError(f"{shlex.join(agent.argv)}: no agent_message_chunk ({reply.error})")
    start = agent.spawned_at
    return _ColdRun(reply.between[0].at - start, init.received - start, session_at - start)


def run_cold_prompt(ctx: BenchContext) -> list[Row]:
    ours: list[_ColdRun] = []
    theirs: list[_ColdRun] = []
    with scripted_llm(_ANSWER) as (server, _turns):
        for _ in range(_runs(ctx, 5)):
            workspace = ctx.workspace("cold_prompt")
            with ctx.spawn(workspace, llm_url=server.url, label="ours") as agent:
                ours.append(_cold_once(agent, workspace, ctx.timeout))
            if ctx.compare_argv:
                workspace = ctx.workspace("cold_prompt_compare")
                with ctx.spawn(
                    workspace, llm_url=server.url, argv=ctx.compare_argv, label="compare"
                ) as agent:
                    theirs.append(_cold_once(agent, workspace, _PROMPT_TIMEOUT))
    mine = summarize([r.to_chunk for r in ours])
    rows = [
        Row(
            metric="cold_prompt",
            value=timing_text(mine),
            target=f"≤ {COLD_PROMPT_RATIO}x the compared agent" if theirs else "-",
            verdict="info",
            notes="spawn → first agent_message_chunk, initialize + session/new + prompt back to"
            f" back; initialize at {ms(summarize([r.to_initialize for r in ours]).median)},"
            f" session/new answered at {ms(summarize([r.to_session for r in ours]).median)}",
            data={"samples_ms": ms_samples([r.to_chunk for r in ours])},
        )
    ]
    if theirs:
        other = summarize([r.to_chunk for r in theirs])
        ratio = mine.median / other.median if other.median > 0 else float("inf")
        rows[0].verdict = at_most(ratio, COLD_PROMPT_RATIO)
        rows[0].data["ratio_ours_over_theirs"] = round(ratio, 3)
        rows.append(
            Row(
                metric="cold_prompt[compare]",
                value=timing_text(other),
                target="-",
                verdict="info",
                notes=f"{shlex.join(ctx.compare_argv or [])}; interleaved with ours; "
                f"ours/theirs = {ratio:.2f}x",
                data={"samples_ms": ms_samples([r.to_chunk for r in theirs])},
            )
        )
    return rows


# -- preload_load -----------------------------------------------------------------------


def _series(agent: AgentProcess, project: dict[str, object]) -> dict[str, list[float]]:
    """``session/new`` and ``session/list`` in turn, a short gap after each."""
    samples: dict[str, list[float]] = {"session/new": [], "session/list": []}
    for number in range(2 * PRELOAD_REQUESTS):
        method = "session/new" if number % 2 == 0 else "session/list"
        params = project if method == "session/new" else {}
        reply = agent.request(method, params, timeout=30.0, keep=lambda _incoming: False)
        if reply.error is not None:
            raise HarnessError(f"{method} failed: {reply.error}")
        samples[method].append(reply.seconds)
        time.sleep(PRELOAD_GAP)
    return samples


def _wait_cpu_quiet(pid: int, timeout: float = 30.0) -> None:
    """Until the agent's CPU time stops growing for half a second (the preload is done)."""
    deadline = time.monotonic() + timeout
    last = cpu_seconds(pid) or 0.0
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = cpu_seconds(pid) or 0.0
        if now - last < 0.01:
            return
        last = now
    raise HarnessError("the agent kept using CPU; the preload never ended")


def run_preload_load(ctx: BenchContext) -> list[Row]:
    workspace = ctx.workspace("preload_load")
    with ctx.spawn(workspace, llm_url="http://127.0.0.1:9") as agent:
        initialize(agent, ctx.timeout)
        wait_until_ready(agent, ctx.timeout)  # the runtime is up
        project: dict[str, object] = {"cwd": str(workspace.project), "mcpServers": []}
        # The preload begins once a session is open and the agent has been quiet for a while
        # (a burst of requests would only postpone it): open one, then wait that long, so the
        # series below runs beside the preload, which is what this row is about.
        new_session(agent, workspace.project, ctx.timeout)
        time.sleep(QUIET_SECONDS + PRELOAD_GAP)
        cpu_before = cpu_seconds(agent.pid) or 0.0
        during = _series(agent, project)
        during_cpu = (cpu_seconds(agent.pid) or 0.0) - cpu_before
        _wait_cpu_quiet(agent.pid)
        warm = _series(agent, project)
    rows: list[Row] = []
    for name in ("session/new", "session/list"):
        a, b = summarize(during[name]), summarize(warm[name])
        ratio = a.median / b.median if b.median > 0 else float("inf")
        rows.append(
            Row(
                metric=f"preload_load {name}",
                value=f"{ratio:.2f}x warm (median {ms(a.median)} vs {ms(b.median)})",
                target=f"≤ {PRELOAD_RATIO}x warm",
                verdict=at_most(ratio, PRELOAD_RATIO),
                notes=f"{PRELOAD_REQUESTS} of each, alternating, {ms(PRELOAD_GAP)} apart,"
                f" while the SDK loads (from {ms(QUIET_SECONDS)} of quiet after the first"
                " session/new)"
                f" (agent CPU meanwhile {during_cpu:.2f} s) vs the same once the agent is quiet;"
                f" p90 {ms(a.p90)} vs {ms(b.p90)}",
                data={
                    "during_samples_ms": ms_samples(during[name]),
                    "warm_samples_ms": ms_samples(warm[name]),
                    "ratio": round(ratio, 3),
                },
            )
        )
    return rows
