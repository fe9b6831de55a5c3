"""Full prompt turns driven by the scripted LLM: text, thinking, tool calls, permissions,
fs/terminal delegation, load replay and fork.

Tool uses are scripted in the agent's own vocabulary (``--tools``). When the agent turns a
scripted tool use into no tool call at all, the vocabulary does not fit the agent and the
tool requirements are not applicable rather than failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..harness.agent_client import Response
from ..harness.client_side import ClientSide, PermissionMode
from ..outcomes import Outcome, failed, not_applicable, passed, soft_failed
from ..requirements import check
from ..vocabularies import ToolSpec
from ._expect import brief, result_dict, session_updates
from .check_context import AgentRun, CheckContext, text_prompt
from .prompting import CANCEL, TURNS

STREAMED_TEXT = "Hello from the scripted model, streamed in pieces."
THINKING_TEXT = "Considering what the user asked for."
USER_PROMPT = "Please do the scripted task."
FINAL_TEXT = "All done."


@dataclass
class TurnRecord:
    run: AgentRun
    session_id: str
    response: Response
    client: ClientSide
    #: (seq, update) for every session/update of this session during the turn.
    updates: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    #: Index of this turn's first call in ``client.calls`` (the client serves many turns).
    calls_from: int = 0

    def of_kind(self, kind: str) -> list[tuple[int, dict[str, Any]]]:
        return [(seq, u) for seq, u in self.updates if u.get("sessionUpdate") == kind]

    def text_of(self, kind: str) -> str:
        out = []
        for _, update in self.of_kind(kind):
            content = update.get("content")
            if isinstance(content, dict) and isinstance(content.get("text"), str):
                out.append(content["text"])
        return "".join(out)

    def tool_call_ids(self) -> list[str]:
        ids = []
        for _, update in self.of_kind("tool_call"):
            if isinstance(update.get("toolCallId"), str) and update["toolCallId"] not in ids:
                ids.append(update["toolCallId"])
        return ids

    def permission_requests(self) -> list[tuple[int, dict[str, Any]]]:
        out = []
        for frame in self.run.frames[self.response.request.seq : self.response.frame.seq]:
            msg = frame.message
            if (
                frame.direction == "a2c"
                and isinstance(msg, dict)
                and msg.get("method") == "session/request_permission"
            ):
                out.append((frame.seq, msg.get("params") or {}))
        return out

    def client_calls(self, prefix: str) -> list[str]:
        calls = self.client.calls[self.calls_from :]
        return [c.method for c in calls if c.method.startswith(prefix)]


def tool_turn(spec: ToolSpec, *args: str) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": spec.name, "input": spec.build(*args)}]}


def final_turn() -> dict[str, Any]:
    return {"content": [{"type": "text", "text": FINAL_TEXT}]}


async def run_turn(
    ctx: CheckContext,
    script: list[Any],
    *,
    permission: PermissionMode = "allow",
    prompt: str = USER_PROMPT,
) -> TurnRecord:
    run = await ctx.turn_agent(permission=permission, llm_script=script)
    session_id = await ctx.new_session(run)
    calls_from = len(run.client.calls)
    response = await run.live.request(
        "session/prompt", text_prompt(session_id, prompt), timeout=ctx.timeout * 3
    )
    record = TurnRecord(run, session_id, response, run.client, calls_from=calls_from)
    record.updates = session_updates(run, session_id, response.request.seq, response.frame.seq)
    return record


def _turn_failed(record: TurnRecord) -> Outcome | None:
    if record.response.is_error:
        return failed(
            f"the prompt failed: {brief(record.response.frame)}", frames=[record.response.frame.seq]
        )
    return None


# -- text and thinking ----------------------------------------------------------------------


@check("turn.streamed-text", scenario=TURNS)
async def scripted_text_is_streamed(ctx: CheckContext) -> Outcome:
    record = await run_turn(
        ctx, [{"content": [{"type": "text", "text": STREAMED_TEXT, "chunks": 4}]}]
    )
    if (bad := _turn_failed(record)) is not None:
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
    if (bad := _turn_failed(record)) is not None:
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


# -- tool calls and permissions -------------------------------------------------------------


async def _allowed_write(ctx: CheckContext) -> TurnRecord | Outcome:
    """One turn that writes allowed.txt with permission "allow" (memoised)."""
    memo = ctx.runtime.memo
    if "allowed-write" not in memo:
        spec = ctx.tools.write
        if spec is None:
            memo["allowed-write"] = not_applicable(
                f"tool vocabulary {ctx.tools.name!r} has no write tool"
            )
        else:
            target = ctx.work / "allowed.txt"
            memo["allowed-write"] = await run_turn(
                ctx, [tool_turn(spec, str(target), "allowed\n"), final_turn()]
            )
    found = memo["allowed-write"]
    if isinstance(found, TurnRecord):
        ctx.current = found.run
    return found


def _no_tool_call(record: TurnRecord) -> Outcome | None:
    if not record.tool_call_ids():
        return not_applicable(
            "the agent produced no tool_call for the scripted tool use "
            "(does --tools fit this agent?)"
        )
    return None


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


@check("turn.tool-call-lifecycle", scenario=TURNS)
async def tool_calls_reach_a_final_status(ctx: CheckContext) -> Outcome:
    record = await _allowed_write(ctx)
    if isinstance(record, Outcome):
        return record
    if (bad := _turn_failed(record) or _no_tool_call(record)) is not None:
        return bad
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


@check("prompt.tool-call-permission-same-id", scenario=TURNS)
async def permission_names_the_announced_tool_call(ctx: CheckContext) -> Outcome:
    record = await _allowed_write(ctx)
    if isinstance(record, Outcome):
        return record
    if (bad := _turn_failed(record) or _no_tool_call(record)) is not None:
        return bad
    requests = record.permission_requests()
    if not requests:
        return not_applicable("the agent asked no permission for the scripted write")
    for seq, params in requests:
        tool_call = params.get("toolCall") or {}
        announced = [u.get("toolCallId") for s, u in record.of_kind("tool_call") if s < seq]
        if tool_call.get("toolCallId") not in announced:
            return failed(
                f"permission request names toolCallId {tool_call.get('toolCallId')!r}, "
                f"announced were {announced}",
                frames=[seq],
            )
    return passed(
        "permission requests name announced tool calls", frames=[seq for seq, _ in requests]
    )


@check("turn.permission-allow", scenario=TURNS)
async def allowed_write_happens(ctx: CheckContext) -> Outcome:
    record = await _allowed_write(ctx)
    if isinstance(record, Outcome):
        return record
    if (bad := _turn_failed(record) or _no_tool_call(record)) is not None:
        return bad
    target = ctx.work / "allowed.txt"
    if not target.exists():
        return failed(
            "the allowed write did not create allowed.txt", frames=[record.response.frame.seq]
        )
    return passed("allowed.txt written", frames=[record.response.frame.seq])


@check("turn.fs-delegation", scenario=TURNS)
async def writes_go_through_the_client(ctx: CheckContext) -> Outcome:
    record = await _allowed_write(ctx)
    if isinstance(record, Outcome):
        return record
    if (bad := _turn_failed(record) or _no_tool_call(record)) is not None:
        return bad
    calls = record.client_calls("fs/")
    if not calls:
        return failed("fs/write_text_file was advertised but the agent wrote the file itself")
    return passed(f"file access through the client: {sorted(set(calls))}")


@check("turn.permission-reject", scenario=TURNS)
async def rejected_write_does_not_happen(ctx: CheckContext) -> Outcome:
    spec = ctx.tools.write
    if spec is None:
        return not_applicable(f"tool vocabulary {ctx.tools.name!r} has no write tool")
    target = ctx.work / "rejected.txt"
    record = await run_turn(
        ctx, [tool_turn(spec, str(target), "must not exist\n"), final_turn()], permission="reject"
    )
    if (bad := _turn_failed(record) or _no_tool_call(record)) is not None:
        return bad
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
    spec = ctx.tools.shell
    if spec is None:
        return not_applicable(f"tool vocabulary {ctx.tools.name!r} has no shell tool")
    record = await run_turn(ctx, [tool_turn(spec, "echo conformance-terminal"), final_turn()])
    if (bad := _turn_failed(record) or _no_tool_call(record)) is not None:
        return bad
    calls = record.client_calls("terminal/")
    if "terminal/create" not in calls:
        ids = record.tool_call_ids()
        if ids and all(_final_status(record, tid) == "failed" for tid in ids):
            # The call failed (typically a tool name the agent does not know): nothing ran,
            # so whether commands would go through the client's terminal was not seen.
            return not_applicable(
                f"the scripted {spec.name} call ended failed without any terminal/* request "
                "(a tool the agent does not know? see --tools), so no command ran"
            )
        return failed(
            "the terminal capability was advertised but the command ran without terminal/create"
        )
    return passed(f"terminal calls: {calls}")


# -- remembered permissions, then fork and load replay after a restart -----------------------
# These come last, in this order. Only text turns follow allow_always (what the agent
# remembers cannot decide them), and the sessions are then loaded by a new process: a client
# loads a session after a restart, and an agent may answer a load of a session it still has
# open without replaying it.


@check("turn.allow-always-remembered", scenario=TURNS)
async def allow_always_is_remembered(ctx: CheckContext) -> Outcome:
    spec = ctx.tools.write
    if spec is None:
        return not_applicable(f"tool vocabulary {ctx.tools.name!r} has no write tool")
    script = [
        tool_turn(spec, str(ctx.work / "always-1.txt"), "one\n"),
        tool_turn(spec, str(ctx.work / "always-2.txt"), "two\n"),
        final_turn(),
    ]
    record = await run_turn(ctx, script, permission="allow_always")
    if (bad := _turn_failed(record) or _no_tool_call(record)) is not None:
        return bad
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
    if (bad := _turn_failed(record)) is not None:
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
    record = await _allowed_write(ctx)
    if isinstance(record, Outcome):
        return record
    if (bad := _turn_failed(record)) is not None:
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


# -- cancel while a permission request is pending -------------------------------------------


@check("cancel.during-tool-call", scenario=CANCEL)
async def cancel_while_permission_is_pending(ctx: CheckContext) -> Outcome:
    spec = ctx.tools.write
    if spec is None:
        return not_applicable(f"tool vocabulary {ctx.tools.name!r} has no write tool")
    target = ctx.work / "cancelled.txt"
    # The permission request stays unanswered: the turn agent is replaced after this check.
    run = await ctx.turn_agent(
        permission="never", llm_script=[tool_turn(spec, str(target), "never\n"), final_turn()]
    )
    session_id = await ctx.new_session(run)
    pending = await run.live.start_request("session/prompt", text_prompt(session_id, USER_PROMPT))
    # The wait also ends with the prompt's answer: once the turn is over, no permission
    # request for it can follow (a full --timeout of waiting for one proved nothing more).
    asked = await run.live.wait_for(
        lambda f: (
            (
                isinstance(f.message, dict)
                and f.message.get("method") == "session/request_permission"
            )
            or (pending.response is not None and f is pending.response.frame)
        ),
        since=pending.request.seq,
        timeout=ctx.timeout,
        what="a permission request",
    )
    if pending.response is not None and asked is pending.response.frame:
        return not_applicable("the turn ended without asking permission for the scripted write")
    cancel = await run.live.notify("session/cancel", {"sessionId": session_id})
    response = await pending.wait()
    frames = [asked.seq, cancel.seq, response.frame.seq]
    stop = result_dict(response).get("stopReason")
    if response.is_error or stop != "cancelled":
        return failed(
            f"cancelled during a permission request, the prompt answered {brief(response.frame)}",
            frames=frames,
        )
    if target.exists():
        return failed("the write happened although its permission was never granted", frames=frames)
    return passed("stopReason cancelled while the permission request was pending", frames=frames)
