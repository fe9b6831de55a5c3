"""``concurrent``: memory per idle session, then 100 sessions prompting at the same moment.

Both parts run in one agent process against the scripted LLM server's echo fallback. The
idle sessions stay open during the burst, as they would in an editor with many tabs.
"""

from __future__ import annotations

import time

from ._client import AgentProcess, HarnessError, encode
from .context import BenchContext, initialize, new_session, prompt_params
from .llm import prompt, scripted_llm
from .procinfo import cpu_seconds, tree_memory
from .results import MIB, Row, at_most, mib, ms, ms_samples, summarize

IDLE_SESSIONS = 1_000
PROMPTING_SESSIONS = 100
MEMORY_TARGET = 1 * MIB
_BATCH = 100  # session/new requests in flight at once while building the idle sessions
_BURST_TIMEOUT = 120.0


def _open_sessions(agent: AgentProcess, cwd: str, count: int, timeout: float) -> list[str]:
    ids: list[str] = []
    params = {"cwd": cwd, "mcpServers": []}
    while len(ids) < count:
        sent = dict(
            agent.send_request("session/new", params) for _ in range(min(_BATCH, count - len(ids)))
        )
        for reply in agent.wait_replies(sent, timeout).values():
            if reply.error is not None or not isinstance(reply.result, dict):
                raise HarnessError(f"session/new failed: {reply.error or reply.result}")
            ids.append(str(reply.result["sessionId"]))
    return ids


def run(
    ctx: BenchContext, idle: int = IDLE_SESSIONS, prompting: int = PROMPTING_SESSIONS
) -> list[Row]:
    workspace = ctx.workspace("concurrent")
    cwd = str(workspace.project)
    with (
        scripted_llm({"echo": True}) as (server, _),
        ctx.spawn(workspace, llm_url=server.url) as agent,
    ):
        initialize(agent, ctx.timeout)
        # One full turn first, so the model client's imports are not charged to the sessions.
        prompt(agent, new_session(agent, workspace.project, ctx.timeout), "warm-up")
        before = tree_memory(agent.pid)
        _open_sessions(agent, cwd, idle, ctx.timeout)
        after = tree_memory(agent.pid)
        if before is None or after is None:
            raise HarnessError("the agent exited while sessions were being created")
        per_session = (after.rss - before.rss) / idle

        burst = _open_sessions(agent, cwd, prompting, ctx.timeout)
        lines: dict[int, bytes] = {}
        for number, session_id in enumerate(burst):
            request_id = agent.new_id()
            lines[request_id] = encode(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "session/prompt",
                    "params": prompt_params(session_id, f"prompt for session {number}"),
                }
            )
        agent_cpu_before = cpu_seconds(agent.pid) or 0.0
        bench_cpu_before = time.process_time()
        # One write: every prompt reaches the agent at the same moment.
        started = agent.write(b"".join(lines.values()))
        replies = agent.wait_replies(dict.fromkeys(lines, started), _BURST_TIMEOUT)
        agent_cpu = (cpu_seconds(agent.pid) or 0.0) - agent_cpu_before
        # The scripted LLM server runs on threads of this process, so this is mostly its cost.
        bench_cpu = time.process_time() - bench_cpu_before
    errors = [r for r in replies.values() if r.error is not None]
    bad_stops = [
        r
        for r in replies.values()
        if r.error is None
        and (not isinstance(r.result, dict) or r.result.get("stopReason") != "end_turn")
    ]
    latencies = [r.seconds for r in replies.values()]
    wall = max(r.received for r in replies.values()) - started
    lat = summarize(latencies)
    failures = len(errors) + len(bad_stops)
    first_error = (errors[0].error if errors else bad_stops[0].result) if failures else None
    return [
        Row(
            metric="concurrent",
            value=f"{failures} errors; wall {ms(wall)}",
            target="0 errors",
            verdict="ok" if failures == 0 else "MISSED",
            notes=f"{prompting} prompts written at once (echo model), {idle} idle sessions open; "
            f"per-prompt median {ms(lat.median)}, p90 {ms(lat.p90)}; CPU during the burst: "
            f"agent {agent_cpu:.2f} s, bench + scripted LLM {bench_cpu:.2f} s"
            + (f"; first failure: {str(first_error)[:120]}" if first_error else ""),
            data={
                "errors": len(errors),
                "bad_stop_reasons": len(bad_stops),
                "wall_ms": round(wall * 1000, 3),
                "latency_samples_ms": ms_samples(latencies),
                "model_requests": len(server.model_requests),
                "agent_cpu_seconds": round(agent_cpu, 3),
                "bench_cpu_seconds": round(bench_cpu, 3),
            },
        ),
        Row(
            metric="concurrent idle memory",
            value=f"{per_session / 1024:.1f} KiB/session",
            target="≤ 1 MiB/session",
            verdict=at_most(per_session, MEMORY_TARGET),
            notes=f"RSS {mib(before.rss)} → {mib(after.rss)} after {idle} session/new",
            data={"rss_before": before.rss, "rss_after": after.rss, "sessions": idle},
        ),
    ]
