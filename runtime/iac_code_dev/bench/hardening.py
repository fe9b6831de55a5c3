"""Robustness numbers (issue 8's closing note); opt-in: ``iac-code-dev bench --only kill9``.

``kill9``: ``--kill-trials`` times, start ``iac-code acp``, begin a turn that streams text,
runs a ``bash`` tool and streams more text, and ``kill -9`` the process at a random moment
of it. Then one new process loads every one of those sessions and prompts it again. A
session counts as inconsistent when any of these fails: its ``events.jsonl`` parses line by
line after the load; the load answers; every replayed tool call ends ``completed`` or
``failed``; the next prompt answers ``end_turn``; and the history the model then receives
alternates user/assistant with every ``tool_use`` answered in the very next message.

``kill9_fast_new`` (issue 32; ``--only kill9`` runs it too): ``--kill-trials`` times, write
``initialize`` and ``session/new`` in one go (the start-up fast path answers the second),
and ``kill -9`` the process 0-300 ms after the ``session/new`` answer; one new process
then lists and loads every answered session. A session it cannot find is lost.

``burst``: one process, 200 sessions, 200 prompts written in one go (echo model); errors and
wall time.

Neither runs in the default ``iac-code-dev bench`` (they take minutes), nor under pytest.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

from acp_scripted_llm import Script, ScriptedLLMServer, Turn

from ._client import AgentProcess, HarnessError, encode
from .concurrency import _open_sessions
from .context import BenchContext, initialize, new_session, prompt_params, wait_until_ready
from .results import Row, ms, summarize

KILL_TRIALS = 80
BURST_PROMPTS = 200
_KILL_WINDOW_S = 1.0  # a turn of the script below takes a bit more than that
#: Kills after a fast-path session/new answer: the runtime is still importing early in it.
_FAST_NEW_KILL_WINDOW_S = 0.3
_BURST_TIMEOUT = 180.0


def _killed_turn_responder(request_body: dict[str, Any]) -> dict[str, Any]:
    """Text + a bash call first; after the tool result, more text (both streamed slowly)."""
    messages = request_body.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    answered_tool = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
    if answered_tool:
        return (
            Turn()
            .text("The command ran; all done. " * 6, chunks=30)
            .timing(chunk_delay=0.01)
            .stop("end_turn")
            .to_dict()
        )
    return (
        Turn()
        .text("Let me run a command first. " * 4, chunks=20)
        .tool_use("bash", {"command": "sleep 0.2; echo checked"})
        .timing(chunk_delay=0.01)
        .stop("tool_use")
        .to_dict()
    )


def _history_problem(messages: list[dict[str, Any]]) -> str | None:
    """Why a model request's history is inconsistent, or None."""
    roles = [m.get("role") for m in messages]
    if not roles or roles[0] != "user":
        return "history does not start with a user message"
    if any(a == b for a, b in itertools.pairwise(roles)):
        return f"roles do not alternate: {roles}"
    for index, message in enumerate(messages):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        uses = {b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"}
        if not uses:
            continue
        following = messages[index + 1].get("content") if index + 1 < len(messages) else []
        blocks = following if isinstance(following, list) else []
        answered = {
            b.get("tool_use_id")
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_result"
        }
        if not uses <= answered:
            return f"tool_use {sorted(map(str, uses - answered))} without a result"
    return None


def _events_problem(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"events.jsonl unreadable: {exc}"
    for number, line in enumerate(data.splitlines(), 1):
        try:
            if not isinstance(json.loads(line), dict):
                return f"events.jsonl line {number} is not an object"
        except ValueError:
            return f"events.jsonl line {number} is not JSON"
    return None


def _kill_one(
    ctx: BenchContext, workspace: Any, server: ScriptedLLMServer, rng: random.Random
) -> tuple[str, float, bool]:
    """(session id, kill delay, whether the turn was still running when killed)."""
    with ctx.spawn(workspace, llm_url=server.url, label="killed") as agent:
        initialize(agent, ctx.timeout)
        wait_until_ready(agent, ctx.timeout)
        session_id = new_session(agent, workspace.project, ctx.timeout)
        prompt_id, _ = agent.send_request("session/prompt", prompt_params(session_id, "check"))
        delay = rng.uniform(0.0, _KILL_WINDOW_S)
        time.sleep(delay)
        try:
            os.kill(agent.pid, signal.SIGKILL)  # a real crash, not the shutdown ladder
        except ProcessLookupError:
            pass
        mid_turn = not _answered_before_eof(agent, prompt_id)
    return session_id, delay, mid_turn


def _answered_before_eof(agent: AgentProcess, request_id: int) -> bool:
    """Read what the killed agent wrote; True when the answer to ``request_id`` is among it."""
    deadline = time.monotonic() + 10.0
    try:
        while True:
            message = agent.next_message(deadline).message
            if "method" not in message and message.get("id") == request_id:
                return True
    except HarnessError:  # end of output
        return False


def _check_one(
    agent: AgentProcess,
    ctx: BenchContext,
    workspace: Any,
    session_id: str,
    server: ScriptedLLMServer,
) -> str | None:
    events = workspace.home / "sessions" / session_id / "events.jsonl"
    load = agent.request(
        "session/load",
        {"sessionId": session_id, "cwd": str(workspace.project), "mcpServers": []},
        timeout=ctx.timeout,
        keep=lambda incoming: incoming.update is not None,
    )
    if load.error is not None:
        return f"load failed: {load.error}"
    problem = _events_problem(events)
    if problem:
        return problem
    finals: dict[str, str] = {}
    for incoming in load.between:
        update = incoming.update or {}
        if update.get("sessionUpdate") in ("tool_call", "tool_call_update"):
            finals[str(update.get("toolCallId"))] = str(update.get("status"))
    open_calls = [tool for tool, status in finals.items() if status not in ("completed", "failed")]
    if open_calls:
        return f"replayed tool calls without a final status: {open_calls}"
    reply = agent.request(
        "session/prompt", prompt_params(session_id, "still consistent?"), timeout=60.0
    )
    if reply.error is not None:
        return f"prompt after load failed: {reply.error}"
    if not isinstance(reply.result, dict) or reply.result.get("stopReason") != "end_turn":
        return f"prompt after load ended {reply.result}"
    return _history_problem(server.model_requests[-1].messages)


def run_kill9(ctx: BenchContext) -> list[Row]:
    trials = ctx.kill_trials
    workspace = ctx.workspace("kill9")
    rng = random.Random(ctx.seed)
    killed: list[tuple[str, float, bool]] = []
    with ScriptedLLMServer(Script(fallback=_killed_turn_responder)) as server:
        for _ in range(trials):
            killed.append(_kill_one(ctx, workspace, server, rng))
    problems: dict[str, str] = {}
    echo = Turn().text("Consistent.").stop("end_turn").to_dict()
    with (
        ScriptedLLMServer(Script(fallback=lambda _body: echo)) as server,
        ctx.spawn(workspace, llm_url=server.url, label="checker") as agent,
    ):
        initialize(agent, ctx.timeout)
        for session_id, _delay, _mid_turn in killed:
            problem = _check_one(agent, ctx, workspace, session_id, server)
            if problem is not None:
                problems[session_id] = problem
    delays = summarize([delay for _, delay, _ in killed])
    mid_turn = sum(1 for *_, running in killed if running)
    first = next(iter(problems.items()), None)
    return [
        Row(
            metric="kill9",
            value=f"{len(problems)} of {trials} inconsistent",
            target="0 inconsistent",
            verdict="ok" if not problems else "MISSED",
            notes=f"{mid_turn} killed mid-turn, kill -9 {ms(delays.min)}..{ms(delays.max)} after"
            f" the prompt (seed {ctx.seed}); each session loaded and prompted again by a new"
            " process" + (f"; first: {first[0]}: {first[1][:160]}" if first else ""),
            data={
                "trials": trials,
                "killed_mid_turn": mid_turn,
                "inconsistent": problems,
                "seed": ctx.seed,
            },
        )
    ]


def _kill_after_fast_new(
    ctx: BenchContext, workspace: Any, rng: random.Random
) -> tuple[str, float]:
    """(answered session id, kill delay after the answer)."""
    with ctx.spawn(workspace, label="killed-after-new") as agent:
        init_id, new_id = agent.new_id(), agent.new_id()
        params = {"cwd": str(workspace.project), "mcpServers": []}
        sent = agent.write(
            encode(
                {
                    "jsonrpc": "2.0",
                    "id": init_id,
                    "method": "initialize",
                    "params": {"protocolVersion": 1},
                }
            )
            + encode({"jsonrpc": "2.0", "id": new_id, "method": "session/new", "params": params})
        )
        reply = agent.wait_reply(new_id, sent, ctx.timeout)
        if reply.error is not None or not isinstance(reply.result, dict):
            raise HarnessError(f"session/new failed: {reply.error}")
        delay = rng.uniform(0.0, _FAST_NEW_KILL_WINDOW_S)
        time.sleep(delay)  # the random kill moment itself
        try:
            os.kill(agent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return str(reply.result["sessionId"]), delay


def run_kill9_fast_new(ctx: BenchContext) -> list[Row]:
    workspace = ctx.workspace("kill9_fast_new")
    rng = random.Random(ctx.seed)
    answered = [_kill_after_fast_new(ctx, workspace, rng) for _ in range(ctx.kill_trials)]
    lost: list[str] = []
    with ctx.spawn(workspace, label="checker") as agent:
        initialize(agent, ctx.timeout)
        listed = agent.request("session/list", {"cwd": str(workspace.project)}, timeout=ctx.timeout)
        known: set[str] = set()
        result = listed.result if isinstance(listed.result, dict) else {}
        while True:
            known.update(str(s.get("sessionId")) for s in result.get("sessions", []))
            cursor = result.get("nextCursor")
            if not cursor:
                break
            page = agent.request(
                "session/list",
                {"cwd": str(workspace.project), "cursor": cursor},
                timeout=ctx.timeout,
            )
            result = page.result if isinstance(page.result, dict) else {}
        for session_id, _delay in answered:
            load = agent.request(
                "session/load",
                {"sessionId": session_id, "cwd": str(workspace.project), "mcpServers": []},
                timeout=ctx.timeout,
                keep=lambda _incoming: False,
            )
            if session_id not in known or load.error is not None:
                lost.append(session_id)
    delays = summarize([delay for _, delay in answered])
    row = Row(
        metric="kill9_fast_new",
        value=f"{len(lost)} of {len(answered)} lost",
        target="0 lost",
        verdict="ok" if not lost else "MISSED",
        notes=f"initialize + session/new written at once (the start-up fast path answers);"
        f" kill -9 {ms(delays.min)}..{ms(delays.max)} after the answer (seed {ctx.seed});"
        " a new process lists and loads each",
        data={"trials": len(answered), "lost": lost, "seed": ctx.seed},
    )
    return [row]


def run_burst(ctx: BenchContext, prompting: int = BURST_PROMPTS) -> list[Row]:
    workspace = ctx.workspace("burst")
    echo = Turn().text("Echo.", chunks=3).stop("end_turn").to_dict()
    with (
        ScriptedLLMServer(Script(fallback=lambda _body: echo)) as server,
        ctx.spawn(workspace, llm_url=server.url) as agent,
    ):
        initialize(agent, ctx.timeout)
        sessions = _open_sessions(agent, str(workspace.project), prompting, ctx.timeout)
        lines: dict[int, bytes] = {}
        for number, session_id in enumerate(sessions):
            request_id = agent.new_id()
            lines[request_id] = encode(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "session/prompt",
                    "params": prompt_params(session_id, f"prompt {number}"),
                }
            )
        started = agent.write(b"".join(lines.values()))
        replies = agent.wait_replies(dict.fromkeys(lines, started), _BURST_TIMEOUT)
    if len(replies) != prompting:
        raise HarnessError(f"only {len(replies)} of {prompting} prompts were answered")
    errors = [
        r
        for r in replies.values()
        if r.error is not None
        or not isinstance(r.result, dict)
        or r.result.get("stopReason") != "end_turn"
    ]
    wall = max(r.received for r in replies.values()) - started
    latency = summarize([r.seconds for r in replies.values()])
    return [
        Row(
            metric="burst",
            value=f"{len(errors)} errors; wall {ms(wall)}",
            target="0 errors",
            verdict="ok" if not errors else "MISSED",
            notes=f"{prompting} prompts written at once to {prompting} sessions of one process;"
            f" per-prompt median {ms(latency.median)}, p90 {ms(latency.p90)}",
            data={"prompts": prompting, "errors": len(errors), "wall_ms": round(wall * 1000, 1)},
        )
    ]
