"""Session metrics without a model: ``session_new``, ``load`` and ``list``.

``load`` and ``list`` write their data straight into the agent's state folder with the
runtime's own `SessionStore` (building 10,000 sessions over the wire would take minutes
and measure something else), then time the request in a freshly started agent.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from iac_code.store import SessionStore, new_session_id

from ._client import HarnessError, Incoming
from .context import BenchContext, Workspace, initialize, wait_until_ready
from .procinfo import tree_memory
from .results import Row, at_most, mib, ms, ms_samples, summarize, timing_text

SESSION_NEW_CALLS = 200
SESSION_NEW_TARGET = 0.010
LOAD_MESSAGES = 10_000
LOAD_TARGET = 1.0
LOAD_RUNS = 3
LIST_SESSIONS = 10_000
LIST_TARGET = 0.100
LIST_RUNS = 3
LIST_WARM_CALLS = 5


def run_session_new(ctx: BenchContext, calls: int = SESSION_NEW_CALLS) -> list[Row]:
    workspace = ctx.workspace("session_new")
    with ctx.spawn(workspace) as agent:
        initialize(agent, ctx.timeout)
        samples: list[float] = []
        params = {"cwd": str(workspace.project), "mcpServers": []}
        for _ in range(calls):
            reply = agent.request("session/new", params, timeout=ctx.timeout, keep=_nothing)
            if reply.error is not None:
                raise HarnessError(f"session/new failed: {reply.error}")
            samples.append(reply.seconds)
        memory = tree_memory(agent.pid)
    summary = summarize(samples)
    rest = summarize(samples[1:]) if len(samples) > 1 else summary
    memory_note = f"; RSS after {calls} sessions {mib(memory.rss)}" if memory else ""
    return [
        Row(
            metric="session_new",
            value=timing_text(summary),
            target="≤ 10 ms median",
            verdict=at_most(summary.median, SESSION_NEW_TARGET),
            notes=f"{calls} sequential calls in one process; first call {ms(samples[0])} "
            f"(waits for the runtime to finish loading after initialize), "
            f"others median {ms(rest.median)}{memory_note}",
            data={"seconds": summary.as_dict(), "samples_ms": ms_samples(samples)},
        )
    ]


def _nothing(_: Incoming) -> bool:
    return False


# -- load -------------------------------------------------------------------------------


def conversation_events(count: int) -> Iterator[dict[str, Any]]:
    """Alternating user/assistant events in the agent's history format."""
    for number in range(count):
        if number % 2 == 0:
            yield {
                "type": "user_message",
                "messageId": f"bench-user-{number}",
                "content": [
                    {
                        "type": "text",
                        "text": f"Question {number}: why does this plan recreate the bucket?",
                    }
                ],
            }
        else:
            yield {
                "type": "assistant_message",
                "messageId": f"bench-assistant-{number}",
                "blocks": [
                    {
                        "type": "text",
                        "text": f"Answer {number}: the bucket name is computed from a value "
                        "that is only known after apply, so Terraform cannot prove it is "
                        "unchanged and plans a replacement. Pin the name or use lifecycle "
                        "ignore_changes.",
                    }
                ],
                "stopReason": "end_turn",
                "interrupted": False,
            }


def run_load(ctx: BenchContext, messages: int = LOAD_MESSAGES, runs: int = LOAD_RUNS) -> list[Row]:
    workspace = ctx.workspace("load")
    store = SessionStore(workspace.home)
    session_id = new_session_id()
    store.create(session_id, str(workspace.project), title="bench: a long conversation")
    store.append_many(session_id, conversation_events(messages))
    params = {"sessionId": session_id, "cwd": str(workspace.project), "mcpServers": []}

    samples: list[float] = []
    replayed: list[int] = []
    last_update_lag: list[float] = []
    for _ in range(runs):
        with ctx.spawn(workspace) as agent:
            initialize(agent, ctx.timeout)
            wait_until_ready(agent, ctx.timeout)
            reply = agent.request("session/load", params, timeout=max(ctx.timeout, 60.0))
            if reply.error is not None:
                raise HarnessError(f"session/load failed: {reply.error}")
            updates = [i for i in reply.between if _replays(i, session_id)]
            samples.append(reply.seconds)
            replayed.append(len(updates))
            if updates:
                last_update_lag.append(updates[-1].at - reply.sent)
    summary = summarize(samples)
    complete = all(count >= messages for count in replayed)
    notes = (
        f"fresh process per run, runtime warmed first; {messages} messages on disk, "
        f"{replayed[-1]} replay notifications before the response"
    )
    if not complete:
        notes += f" — INCOMPLETE replay (expected ≥ {messages})"
    return [
        Row(
            metric="load",
            value=timing_text(summary),
            target="≤ 1 s incl. replay",
            verdict=at_most(summary.median, LOAD_TARGET) if complete else "MISSED",
            notes=notes,
            data={
                "seconds": summary.as_dict(),
                "samples_ms": ms_samples(samples),
                "replayed": replayed,
                "last_update_ms": ms_samples(last_update_lag),
            },
        )
    ]


def _replays(incoming: Incoming, session_id: str) -> bool:
    update = incoming.update
    if update is None or incoming.message["params"].get("sessionId") != session_id:
        return False
    return update.get("sessionUpdate") in ("user_message_chunk", "agent_message_chunk")


# -- list -------------------------------------------------------------------------------


def run_list(ctx: BenchContext, sessions: int = LIST_SESSIONS, runs: int = LIST_RUNS) -> list[Row]:
    workspace = ctx.workspace("list")
    store = SessionStore(workspace.home)
    for number in range(sessions):
        store.create(new_session_id(), str(workspace.project), title=f"bench session {number}")
    timings = time_first_list(ctx, workspace, sessions, runs)
    return [list_row("list", timings, f"{sessions} sessions on disk")]


@dataclass(frozen=True, slots=True)
class ListTimings:
    first: list[float]  # the first session/list of each fresh process
    warm: list[float]  # the calls after it
    page_size: int


def time_first_list(
    ctx: BenchContext,
    workspace: Workspace,
    sessions: int,
    runs: int = LIST_RUNS,
    env: Mapping[str, str] | None = None,
    settle: float = 0.0,
) -> ListTimings:
    """``session/list`` in ``runs`` fresh agents (runtime warmed first, then ``settle``
    seconds of quiet): the first call of each, then :data:`LIST_WARM_CALLS` more."""
    first: list[float] = []
    warm: list[float] = []
    page_sizes: list[int] = []
    for _ in range(runs):
        with ctx.spawn(workspace, env=env) as agent:
            initialize(agent, ctx.timeout)
            wait_until_ready(agent, ctx.timeout)
            time.sleep(settle)
            for call in range(1 + LIST_WARM_CALLS):
                reply = agent.request("session/list", {}, timeout=ctx.timeout, keep=_nothing)
                if reply.error is not None or not isinstance(reply.result, dict):
                    raise HarnessError(f"session/list failed: {reply.error or reply.result}")
                (first if call == 0 else warm).append(reply.seconds)
                page_sizes.append(len(reply.result.get("sessions") or []))
                if sessions > len(reply.result.get("sessions") or []) and not reply.result.get(
                    "nextCursor"
                ):
                    raise HarnessError("session/list gave a partial page without nextCursor")
    return ListTimings(first, warm, page_sizes[0])


def list_row(metric: str, timings: ListTimings, where: str, extra_notes: str = "") -> Row:
    first_summary = summarize(timings.first)
    warm_summary = summarize(timings.warm)
    return Row(
        metric=metric,
        value=timing_text(first_summary),
        target="≤ 100 ms first page",
        verdict=at_most(first_summary.median, LIST_TARGET),
        notes=f"first call in a fresh process (runtime warmed first), {where}, "
        f"page of {timings.page_size}; warm calls median {ms(warm_summary.median)}{extra_notes}",
        data={
            "first_seconds": first_summary.as_dict(),
            "first_samples_ms": ms_samples(timings.first),
            "warm_seconds": warm_summary.as_dict(),
            "warm_samples_ms": ms_samples(timings.warm),
        },
    )
