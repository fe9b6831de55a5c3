"""Full prompt turns driven by the scripted LLM: text, thinking, tool calls, permissions,
fs/terminal delegation, load replay and fork.

Tool uses are scripted in the agent's own vocabulary (``--tools``). When the agent turns a
scripted tool use into no tool call at all, the vocabulary does not fit the agent and the
tool requirements are not applicable rather than failed.
"""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import Response
from ..outcomes import Outcome, failed, not_applicable, passed, soft_failed
from ..requirements import check
from ..scenarios._expect import brief, result_dict, session_updates
from ..scenarios.catalog import TURNS
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.observed_checks import check_given
from ..scenarios.scripted_turns import (
    FINAL_TEXT,
    USER_PROMPT,
    TurnRecord,
    allowed_write,
    allowed_write_with_a_tool_call,
    run_turn,
    tool_calling_turn,
    turn_failed,
)

STREAMED_TEXT = "Hello from the scripted model, streamed in pieces."


THINKING_TEXT = "Considering what the user asked for."


@check("turn.streamed-text", scenario=TURNS)
async def scripted_text_is_streamed(ctx: CheckContext) -> Outcome:
    record = await run_turn(
        ctx, [{"content": [{"type": "text", "text": STREAMED_TEXT, "chunks": 4}]}]
    )
    if (bad := turn_failed(record)) is not None:
        return bad
    text = record.text_of("agent_message_chunk")
    chunks = [seq for seq, _ in record.of_kind("agent_message_chunk")][:5]
    frames = [*chunks, record.response.frame.seq]
    if STREAMED_TEXT not in text:
        return failed(
            f"agent_message_chunk text {text[:120]!r} lacks the scripted text", frames=frames
        )
    stop = result_dict(record.response).get("stopReason")
    if stop != "end_turn":
        return failed(f"the turn ended with {stop!r}, not end_turn", frames=frames)
    return passed(
        f"{len(record.of_kind('agent_message_chunk'))} chunks carried the text; end_turn",
        frames=frames,
    )


@check("turn.thinking", scenario=TURNS)
async def scripted_thinking_is_streamed(ctx: CheckContext) -> Outcome:
    script = [
        {
            "content": [
                {"type": "thinking", "thinking": THINKING_TEXT, "signature": "sig"},
                {"type": "text", "text": FINAL_TEXT},
            ]
        }
    ]
    record = await run_turn(ctx, script)
    if (bad := turn_failed(record)) is not None:
        return bad
    thought = record.text_of("agent_thought_chunk")
    if THINKING_TEXT not in thought:
        return failed(
            f"no agent_thought_chunk carried the scripted thinking (got {thought[:80]!r})",
            frames=[record.response.frame.seq],
        )
    return passed(
        "thinking streamed as agent_thought_chunk",
        frames=[seq for seq, _ in record.of_kind("agent_thought_chunk")][:5],
    )


FINAL_STATUSES = {"completed", "failed"}


def _final_status(record: TurnRecord, tool_call_id: str) -> str | None:
    status = None
    for _, update in record.updates:
        if update.get("toolCallId") == tool_call_id and update.get("sessionUpdate") in (
            "tool_call",
            "tool_call_update",
        ):
            status = update.get("status") or status
    return status


@check_given("turn.tool-call-lifecycle", TURNS, allowed_write_with_a_tool_call)
async def tool_calls_reach_a_final_status(ctx: CheckContext, record: TurnRecord) -> Outcome:
    unfinished = {tid: _final_status(record, tid) for tid in record.tool_call_ids()}
    unfinished = {tid: st for tid, st in unfinished.items() if st not in FINAL_STATUSES}
    if unfinished:
        return failed(
            f"tool calls without a final status before the response: {unfinished}",
            frames=[record.response.frame.seq],
        )
    return passed(
        f"{len(record.tool_call_ids())} tool calls reached completed/failed",
        frames=[record.response.frame.seq],
    )


@check_given("turn.permission-allow", TURNS, allowed_write_with_a_tool_call)
async def allowed_write_happens(ctx: CheckContext, record: TurnRecord) -> Outcome:
    target = ctx.work / "allowed.txt"
    if not target.exists():
        return failed(
            "the allowed write did not create allowed.txt", frames=[record.response.frame.seq]
        )
    return passed("allowed.txt written", frames=[record.response.frame.seq])


@check_given("turn.fs-delegation", TURNS, allowed_write_with_a_tool_call)
async def writes_go_through_the_client(ctx: CheckContext, record: TurnRecord) -> Outcome:
    calls = record.client_calls("fs/")
    if not calls:
        return failed("fs/write_text_file was advertised but the agent wrote the file itself")
    return passed(f"file access through the client: {sorted(set(calls))}")


@check("turn.permission-reject", scenario=TURNS)
async def rejected_write_does_not_happen(ctx: CheckContext) -> Outcome:
    target = ctx.work / "rejected.txt"
    use = (str(target), "must not exist\n")
    record = await tool_calling_turn(ctx, "write", use, permission="reject")
    if isinstance(record, Outcome):
        return record
    if not record.permission_requests():
        return not_applicable("the agent asked no permission for the scripted write")
    frames = [seq for seq, _ in record.permission_requests()] + [record.response.frame.seq]
    if target.exists():
        return failed("a rejected write still created rejected.txt", frames=frames)
    completed = [tid for tid in record.tool_call_ids() if _final_status(record, tid) == "completed"]
    if completed:
        return failed(f"rejected tool calls ended completed: {completed}", frames=frames)
    return passed("rejected write did not happen", frames=frames)


@check("turn.terminal-delegation", scenario=TURNS)
async def shell_goes_through_client_terminal(ctx: CheckContext) -> Outcome:
    record = await tool_calling_turn(ctx, "shell", ("echo conformance-terminal",))
    if isinstance(record, Outcome):
        return record
    calls = record.client_calls("terminal/")
    if "terminal/create" not in calls:
        ids = record.tool_call_ids()
        if ids and all(_final_status(record, tid) == "failed" for tid in ids):
            # The call failed (typically a tool name the agent does not know): nothing ran,
            # so whether commands would go through the client's terminal was not seen.
            assert ctx.tools.shell is not None  # tool_calling_turn ran it
            return not_applicable(
                f"the scripted {ctx.tools.shell.name} call ended failed without any "
                "terminal/* request (a tool the agent does not know? see --tools), so no "
                "command ran"
            )
        return failed(
            "the terminal capability was advertised but the command ran without terminal/create"
        )
    return passed(f"terminal calls: {calls}")


@check("turn.allow-always-remembered", scenario=TURNS)
async def allow_always_is_remembered(ctx: CheckContext) -> Outcome:
    uses = [(str(ctx.work / "always-1.txt"), "one\n"), (str(ctx.work / "always-2.txt"), "two\n")]
    record = await tool_calling_turn(ctx, "write", *uses, permission="allow_always")
    if isinstance(record, Outcome):
        return record
    asked = record.permission_requests()
    if not asked:
        return not_applicable("the agent asked no permission for the scripted writes")
    if len(record.tool_call_ids()) < 2:
        return not_applicable("the agent made fewer than two tool calls")
    if len(asked) > 1:
        return failed(
            f"asked {len(asked)} times although the first answer was allow_always",
            frames=[s for s, _ in asked],
        )
    return passed("asked once, then remembered allow_always", frames=[s for s, _ in asked])


async def _restarted(ctx: CheckContext) -> AgentRun:
    """A new agent process, once every earlier process of the scenario is stopped (so that
    an agent that holds its open sessions, e.g. by a lock, lets go of them). Memoised."""
    memo = ctx.runtime.memo
    if "restarted" not in memo:
        for run in ctx.runtime.runs:
            run.reusable = False
            if run.process is not None and run.exit is None:
                run.exit = await ctx.runtime.shutdown(run)
        memo["restarted"] = await ctx.spawn()
    restarted: AgentRun = memo["restarted"]
    ctx.current = restarted
    return restarted


async def _load_after_restart(
    ctx: CheckContext, session_id: str
) -> tuple[AgentRun, Response, list[tuple[int, dict[str, Any]]]]:
    run = await _restarted(ctx)
    response = await run.live.request(
        "session/load",
        {"sessionId": session_id, "cwd": str(ctx.work), "mcpServers": []},
        timeout=ctx.timeout * 2,
    )
    return run, response, session_updates(run, session_id, response.request.seq, response.frame.seq)


@check("turn.fork-keeps-history", scenario=TURNS)
async def fork_replays_the_source_history(ctx: CheckContext) -> Outcome:
    surface = await ctx.surface()
    if not (surface.get("agentCapabilities") or {}).get("loadSession"):
        return not_applicable(
            "loadSession is not advertised, so a fork's history cannot be observed"
        )
    record = await run_turn(ctx, [{"content": [{"type": "text", "text": STREAMED_TEXT}]}])
    if (bad := turn_failed(record)) is not None:
        return bad
    fork = await record.run.live.request(
        "session/fork", {"sessionId": record.session_id, "cwd": str(ctx.work), "mcpServers": []}
    )
    fork_id = result_dict(fork).get("sessionId")
    if fork.is_error or not isinstance(fork_id, str):
        return failed(f"session/fork failed: {brief(fork.frame)}", frames=[fork.frame.seq])
    run, load, replay = await _load_after_restart(ctx, fork_id)
    if load.is_error:
        return failed(
            f"session/load of the fork in a new process failed: {brief(load.frame)}",
            frames=[fork.frame.seq, load.frame.seq],
        )
    replayed = TurnRecord(run, fork_id, load, record.client, replay)
    if USER_PROMPT not in replayed.text_of("user_message_chunk"):
        return failed(
            "loading the fork did not replay the source's prompt",
            frames=[fork.frame.seq, load.frame.seq],
        )
    return passed("the fork replays the source history", frames=[fork.frame.seq, load.frame.seq])


@check("turn.load-replay-fidelity", scenario=TURNS)
async def load_replays_what_was_streamed(ctx: CheckContext) -> Outcome:
    record = await allowed_write(ctx)
    if isinstance(record, Outcome):
        return record
    if (bad := turn_failed(record)) is not None:
        return bad
    run, response, replay = await _load_after_restart(ctx, record.session_id)
    if response.is_error:
        return failed(
            f"session/load in a new process failed: {brief(response.frame)}",
            frames=[response.frame.seq],
        )
    replayed = TurnRecord(run, record.session_id, response, record.client, replay)
    problems = []
    if USER_PROMPT not in replayed.text_of("user_message_chunk"):
        problems.append("the user prompt was not replayed as user_message_chunk")
    streamed_text = record.text_of("agent_message_chunk")
    if streamed_text and streamed_text not in replayed.text_of("agent_message_chunk"):
        problems.append(f"agent text {streamed_text[:60]!r} was not replayed")
    missing = [tid for tid in record.tool_call_ids() if tid not in replayed.tool_call_ids()]
    renamed = bool(missing) and len(replayed.tool_call_ids()) >= len(record.tool_call_ids())
    if missing and not renamed:
        problems.append(f"tool calls not replayed: {missing}")
    if problems:
        return failed("; ".join(problems), frames=[response.frame.seq])
    if renamed:
        # Replayed, under new ids: ACP asks for the whole conversation, not for its ids.
        return soft_failed(
            f"the tool calls were replayed under new ids ({missing} became "
            f"{[t for t in replayed.tool_call_ids() if t not in record.tool_call_ids()]})",
            "no MUST sentence asks a replay to keep tool call ids: judged as SHOULD",
            frames=[response.frame.seq],
        )
    return passed(
        f"{len(replay)} updates replayed: prompt, text and "
        f"{len(record.tool_call_ids())} tool calls",
        frames=[response.frame.seq],
    )
