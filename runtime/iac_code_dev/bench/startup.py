"""``startup``: spawn → ``initialize`` answer, and the memory of the process at that moment.

With ``--compare CMD`` the other agent is measured in the same loop, alternating ours and
theirs (A, B, A, B, ...) so that machine noise during the run hits both alike.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ._client import HarnessError
from .context import INITIALIZE_PARAMS, BenchContext, Workspace
from .procinfo import tree_memory
from .results import MIB, Row, at_most, mib, ms, ms_samples, summarize, timing_text

TARGET_SECONDS = 0.100
TARGET_RSS = 45 * MIB


@dataclass(frozen=True, slots=True)
class StartupSample:
    seconds: float
    rss: int
    hwm: int
    processes: int


def measure_once(
    ctx: BenchContext, workspace: Workspace, argv: list[str], label: str
) -> StartupSample:
    agent = ctx.spawn(workspace, argv=argv, label=label)
    try:
        # Written at once: the pipe holds it until the agent reads, as an editor's would.
        request_id, _ = agent.send_request("initialize", INITIALIZE_PARAMS)
        reply = agent.wait_reply(request_id, agent.spawned_at, ctx.timeout)
        memory = tree_memory(agent.pid)
        if reply.error is not None:
            raise HarnessError(f"{shlex.join(argv)}: initialize failed: {reply.error}")
        if memory is None:
            raise HarnessError(f"{shlex.join(argv)}: exited right after answering initialize")
        return StartupSample(reply.seconds, memory.rss, memory.hwm, memory.processes)
    finally:
        agent.close()


def _rows(name: str, samples: list[StartupSample], *, targets: bool) -> list[Row]:
    times = summarize([s.seconds for s in samples])
    rss = summarize([float(s.rss) for s in samples])
    hwm = summarize([float(s.hwm) for s in samples])
    processes = max(s.processes for s in samples)
    tree_note = f", summed over {processes} processes" if processes > 1 else ""
    data = {
        "seconds": times.as_dict(),
        "samples_ms": ms_samples([s.seconds for s in samples]),
        "rss_bytes": [s.rss for s in samples],
        "hwm_bytes": [s.hwm for s in samples],
    }
    return [
        Row(
            metric=name,
            value=timing_text(times),
            target="≤ 100 ms median" if targets else "-",
            verdict=at_most(times.median, TARGET_SECONDS) if targets else "info",
            notes="spawn → initialize response over stdio",
            data=data,
        ),
        Row(
            metric=f"{name} RSS",
            value=f"median {mib(rss.median)} (max {mib(rss.max)})",
            target="≤ 45 MiB" if targets else "-",
            verdict=at_most(rss.median, TARGET_RSS) if targets else "info",
            notes=f"VmRSS read right after the response; VmHWM median {mib(hwm.median)}{tree_note}",
            data={"rss": rss.as_dict(), "hwm": hwm.as_dict()},
        ),
    ]


def run(ctx: BenchContext) -> list[Row]:
    workspace = ctx.workspace("startup")
    ours: list[StartupSample] = []
    theirs: list[StartupSample] = []
    for _ in range(max(1, ctx.repeat)):
        ours.append(measure_once(ctx, workspace, ctx.agent_argv, "ours"))
        if ctx.compare_argv:
            theirs.append(measure_once(ctx, workspace, ctx.compare_argv, "compare"))
    rows = _rows("startup", ours, targets=True)
    if ctx.compare_argv:
        label = "startup[compare]"
        compare_rows = _rows(label, theirs, targets=False)
        a = summarize([s.seconds for s in ours]).median
        b = summarize([s.seconds for s in theirs]).median
        ratio = b / a if a > 0 else float("inf")
        compare_rows[0].notes = (
            f"{shlex.join(ctx.compare_argv)}; interleaved with ours; "
            f"medians ours {ms(a)} vs theirs {ms(b)}: theirs/ours = {ratio:.2f}x"
        )
        compare_rows[0].data["ratio_theirs_over_ours"] = round(ratio, 3)
        rows.extend(compare_rows)
    return rows
