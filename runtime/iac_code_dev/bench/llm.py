"""Model-facing metrics against the scripted LLM server: ``first_chunk``, ``relay`` and
``tool_call``.

The server runs in this process, so its timestamps (``RecordedRequest.monotonic``, taken
when a request arrives) and ours share ``CLOCK_MONOTONIC``. `StampedTurns` is the server's
responder: it is called just before a response starts streaming and stamps that moment,
which splits a round trip into "the LLM's own latency" and everything the agent adds.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from acp_scripted_llm import Script, ScriptedLLMServer, Turn

from ._client import AgentProcess, HarnessError, Incoming, Reply
from .context import BenchContext, initialize, new_session, prompt_params, text_of
from .procinfo import cpu_seconds
from .results import Row, at_least, at_most, ms, ms_samples, summarize, timing_text

FIRST_CHUNK_PROMPTS = 20
FIRST_CHUNK_TARGET = 0.020
RELAY_DELTAS = 20_000
RELAY_RUNS = 3
RELAY_TARGET = 20_000.0
TOOL_CALL_RUNS = 10
_PROMPT_TIMEOUT = 60.0


class StampedTurns:
    """Responder for the scripted server: queued turns first, then ``default``; stamps the
    moment each answer is about to stream (called on the server's request threads)."""

    def __init__(self, default: dict[str, Any]) -> None:
        self._default = default
        self._queue: deque[dict[str, Any]] = deque()
        self._lock = threading.Lock()
        self.stamps: list[float] = []

    def push(self, *turns: dict[str, Any]) -> None:
        with self._lock:
            self._queue.extend(turns)

    def __call__(self, _request_body: dict[str, Any]) -> dict[str, Any]:
        now = time.monotonic()
        with self._lock:
            self.stamps.append(now)
            return self._queue.popleft() if self._queue else self._default


@contextmanager
def scripted_llm(default: dict[str, Any]) -> Iterator[tuple[ScriptedLLMServer, StampedTurns]]:
    turns = StampedTurns(default)
    with ScriptedLLMServer(Script(fallback=turns)) as server:
        yield server, turns


def _is_message_chunk(incoming: Incoming) -> bool:
    return text_of(incoming.update) is not None


def prompt(agent: AgentProcess, session_id: str, text: str, *, keep_all: bool = False) -> Reply:
    """One ``session/prompt`` round trip, keeping the agent_message_chunk notifications
    (or every notification with ``keep_all``)."""
    reply = agent.request(
        "session/prompt",
        prompt_params(session_id, text),
        timeout=_PROMPT_TIMEOUT,
        keep=None if keep_all else _is_message_chunk,
    )
    if reply.error is not None:
        raise HarnessError(f"session/prompt failed: {reply.error}")
    return reply


# -- first_chunk ------------------------------------------------------------------------


def timed_first_chunk(
    agent: AgentProcess,
    server: ScriptedLLMServer,
    turns: StampedTurns,
    session_id: str,
    text: str,
) -> tuple[float, float]:
    """One prompt: (prompt → first agent_message_chunk, the LLM's own part of that)."""
    before = len(server.model_requests)
    reply = prompt(agent, session_id, text)
    if not reply.between:
        raise HarnessError("the prompt finished without any agent_message_chunk")
    requests = server.model_requests
    if len(requests) != before + 1 or len(turns.stamps) != len(requests):
        raise HarnessError("expected exactly one model request per prompt")
    return reply.between[0].at - reply.sent, turns.stamps[-1] - requests[-1].monotonic


def run_first_chunk(ctx: BenchContext, prompts: int = FIRST_CHUNK_PROMPTS) -> list[Row]:
    workspace = ctx.workspace("first_chunk")
    answer = Turn().text("Terraform plans are read before they are applied.", chunks=4).to_dict()
    with scripted_llm(answer) as (server, turns), ctx.spawn(workspace, llm_url=server.url) as agent:
        initialize(agent, ctx.timeout)
        session_id = new_session(agent, workspace.project, ctx.timeout)
        prompt(agent, session_id, "warm-up")  # loads the model client and its imports
        raw: list[float] = []
        llm_own: list[float] = []
        for number in range(prompts):
            total, own = timed_first_chunk(agent, server, turns, session_id, f"question {number}")
            raw.append(total)
            llm_own.append(own)
    beyond = [r - o for r, o in zip(raw, llm_own, strict=True)]
    summary = summarize(beyond)
    raw_summary = summarize(raw)
    return [
        Row(
            metric="first_chunk",
            value=timing_text(summary),
            target="≤ 20 ms beyond LLM",
            verdict=at_most(summary.median, FIRST_CHUNK_TARGET),
            notes=f"warm, {prompts} prompts; raw prompt→first chunk median "
            f"{ms(raw_summary.median)} (p90 {ms(raw_summary.p90)}), LLM's own latency "
            f"median {ms(summarize(llm_own).median)}",
            data={
                "beyond_llm_seconds": summary.as_dict(),
                "raw_seconds": raw_summary.as_dict(),
                "beyond_samples_ms": ms_samples(beyond),
                "raw_samples_ms": ms_samples(raw),
                "llm_own_samples_ms": ms_samples(llm_own),
            },
        )
    ]


# -- relay ------------------------------------------------------------------------------


def relay_text(deltas: int) -> str:
    """``deltas`` characters that are not all alike, so reordering would be noticed."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(itertools.islice(itertools.cycle(alphabet), deltas))


@dataclass(slots=True)
class RelaySample:
    rate: float  # LLM deltas per second between the first and the last chunk received
    end_to_end_rate: float  # LLM deltas per second from writing the prompt to the last chunk
    notifications: int
    intact: bool
    window: float
    agent_cpu: float  # CPU seconds the agent used for the whole turn
    bench_cpu: float  # CPU seconds of this process (client + scripted LLM server threads)


def run_relay(ctx: BenchContext, deltas: int = RELAY_DELTAS, runs: int = RELAY_RUNS) -> list[Row]:
    workspace = ctx.workspace("relay")
    expected = relay_text(deltas)
    big = Turn().text(expected, chunks=deltas).to_dict()
    samples: list[RelaySample] = []
    with scripted_llm(big) as (server, turns), ctx.spawn(workspace, llm_url=server.url) as agent:
        initialize(agent, ctx.timeout)
        session_id = new_session(agent, workspace.project, ctx.timeout)
        turns.push(Turn().text("warm-up").to_dict())
        prompt(agent, session_id, "warm-up")
        for _ in range(runs):
            agent_cpu = cpu_seconds(agent.pid) or 0.0
            bench_cpu = time.process_time()
            reply = prompt(agent, session_id, "stream a lot")
            agent_cpu = (cpu_seconds(agent.pid) or 0.0) - agent_cpu
            bench_cpu = time.process_time() - bench_cpu
            chunks = reply.between
            if not chunks:
                raise HarnessError("the relay prompt produced no agent_message_chunk")
            received = "".join(text_of(c.update) or "" for c in chunks)
            window = chunks[-1].at - chunks[0].at
            total = chunks[-1].at - reply.sent
            samples.append(
                RelaySample(
                    rate=deltas / window if window > 0 else float("inf"),
                    end_to_end_rate=deltas / total,
                    notifications=len(chunks),
                    intact=received == expected,
                    window=window,
                    agent_cpu=agent_cpu,
                    bench_cpu=bench_cpu,
                )
            )
    rates = summarize([s.rate for s in samples])
    end_to_end = summarize([s.end_to_end_rate for s in samples])
    intact = all(s.intact for s in samples)
    notes = (
        f"{deltas} one-character deltas per turn, {runs} turns; carried by "
        f"{samples[-1].notifications} notifications; prompt→last chunk "
        f"{end_to_end.median:,.0f}/s; text {'intact' if intact else 'CORRUPTED OR INCOMPLETE'}"
        f"; CPU per turn: agent {samples[-1].agent_cpu:.2f} s, "
        f"bench + scripted LLM {samples[-1].bench_cpu:.2f} s"
    )
    return [
        Row(
            metric="relay",
            value=f"median {rates.median:,.0f} chunks/s (min {rates.min:,.0f}, n={rates.n})",
            target="≥ 20,000 chunks/s",
            verdict=at_least(rates.median, RELAY_TARGET) if intact else "MISSED",
            notes=notes,
            data={
                "chunks_per_second": rates.as_dict(),
                "end_to_end_chunks_per_second": end_to_end.as_dict(),
                "notifications": [s.notifications for s in samples],
                "window_ms": ms_samples([s.window for s in samples]),
                "intact": intact,
                "agent_cpu_seconds": [round(x.agent_cpu, 3) for x in samples],
                "bench_cpu_seconds": [round(x.bench_cpu, 3) for x in samples],
            },
        )
    ]


# -- tool_call --------------------------------------------------------------------------


@dataclass(slots=True)
class _ToolRun:
    overhead: float  # tool_use response starts streaming → next model request arrives
    to_announce: float | None  # → the client sees the tool_call
    to_done: float | None  # → the client sees the tool_call_update completed
    problem: str | None = None
    statuses: list[str] = field(default_factory=list)


def run_tool_call(ctx: BenchContext, runs: int = TOOL_CALL_RUNS) -> list[Row]:
    workspace = ctx.workspace("tool_call")
    (workspace.project / "main.tf").write_text(
        'resource "aws_s3_bucket" "logs" {\n  bucket = "bench-logs"\n}\n', encoding="utf-8"
    )
    done = Turn().text("The file defines one bucket.").to_dict()
    results: list[_ToolRun] = []
    with scripted_llm(done) as (server, turns), ctx.spawn(workspace, llm_url=server.url) as agent:
        initialize(agent, ctx.timeout)
        session_id = new_session(agent, workspace.project, ctx.timeout)
        prompt(agent, session_id, "warm-up")
        for _ in range(runs):
            turns.push(Turn().tool_use("read_file", {"path": "main.tf"}).to_dict(), done)
            before = len(server.model_requests)
            reply = prompt(agent, session_id, "what does main.tf define?", keep_all=True)
            requests = server.model_requests[before:]
            stamps = turns.stamps[before:]
            if len(requests) < 2:
                results.append(_ToolRun(0.0, None, None, "the agent made no follow-up request"))
                continue
            results.append(_tool_run(reply, stamps[0], requests[1].monotonic, requests[1].body))
    problems = [r.problem for r in results if r.problem]
    if problems:
        return [
            Row(
                metric="tool_call",
                value="n/a (tool not available)",
                target="-",
                verdict="n/a",
                notes=problems[0][:160],
                data={"problems": problems},
            )
        ]
    summary = summarize([r.overhead for r in results])
    announce = [r.to_announce for r in results if r.to_announce is not None]
    finished = [r.to_done for r in results if r.to_done is not None]
    breakdown = ""
    if announce and finished:
        breakdown = (
            f"; client saw tool_call after {ms(summarize(announce).median)}, "
            f"completed after {ms(summarize(finished).median)}"
        )
    return [
        Row(
            metric="tool_call",
            value=timing_text(summary),
            target="-",
            verdict="info",
            notes="read_file of a small file: tool_use response start → next model request"
            f" (includes streaming the short tool_use response){breakdown}",
            data={
                "seconds": summary.as_dict(),
                "samples_ms": ms_samples([r.overhead for r in results]),
            },
        )
    ]


def _tool_run(reply: Reply, tool_turn_start: float, next_request: float, body: Any) -> _ToolRun:
    announced = completed = None
    statuses: list[str] = []
    for incoming in reply.between:
        update = incoming.update or {}
        kind = update.get("sessionUpdate")
        if kind == "tool_call" and announced is None:
            announced = incoming.at - tool_turn_start
        elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
            statuses.append(str(update["status"]))
            completed = incoming.at - tool_turn_start
    run = _ToolRun(next_request - tool_turn_start, announced, completed, statuses=statuses)
    error = _tool_result_error(body)
    if error is not None:
        run.problem = f"the tool result was an error: {error}"
    elif "failed" in statuses:
        run.problem = "the tool call ended failed"
    return run


def _tool_result_error(body: Any) -> str | None:
    """The text of an erroneous tool_result in the follow-up request, if any."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not messages:
        return "the follow-up request has no messages"
    content = messages[-1].get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if not block.get("is_error"):
                return None
            detail = block.get("content")
            return detail if isinstance(detail, str) else str(detail)[:200]
    return "the follow-up request carries no tool_result"
