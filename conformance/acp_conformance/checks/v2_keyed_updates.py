"""version.v2-* (keyed updates): protocol version 2's keyed updates ("patches") and open
enums, judged over every update the v2 agents of the scenario sent: message updates name their
message, tool call updates their tool call, plan updates their plan, terminal updates keep one
absolute cwd per terminal and carry standalone base64 output; tool kinds and statuses and plan
priorities and statuses are ACP's own values or ``_``-prefixed; permission requests are
well-formed and the turn goes on once one is answered. Besides the echo turn of
:mod:`..scenarios.v2_agent`, the checks drive one v2 session through a scripted tool turn (a
file write the agent asks permission for) and a second prompt. What the agent never sends
(plans, terminals) is not applicable."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from ..harness.agent_client import Response
from ..harness.recorder import Frame
from ..judges.run_walk import agent_messages, session_updates
from ..outcomes import Outcome, failed, not_applicable, passed
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.observed_checks import check_given
from ..scenarios.scripted_turns import final_turn, tool_turn
from ..scenarios.v2_agent import (
    MESSAGE_KINDS,
    V2,
    V2_SCENARIO,
    echo_turn,
    is_idle,
    prompted_to_idle,
    v2_problems,
    v2_run_with_sessions,
    v2_turn_session,
)

#: Values the v2 draft defines per open enum; anything else must start with "_".
TOOL_KINDS = frozenset(
    {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode"}
    | {"other"}
)
TOOL_STATUSES = frozenset({"pending", "in_progress", "completed", "failed", "cancelled"})
PLAN_PRIORITIES = frozenset({"high", "medium", "low"})
PLAN_STATUSES = frozenset({"pending", "in_progress", "completed", "cancelled"})

_TOOL_PROMPT = "Please write the file the scripted task names."
_SECOND_PROMPT = "And now say hello once more."


@dataclass
class _ToolTurns:
    """One v2 session with two prompts: a tool turn, then a plain one."""

    run: AgentRun
    session_id: str
    answers: list[Response]


def _known(value: object, defined: frozenset[str]) -> bool:
    return value in defined or (isinstance(value, str) and value.startswith("_"))


def _filled(value: object) -> bool:
    return isinstance(value, str) and bool(value)


async def _tool_turns(ctx: CheckContext) -> _ToolTurns | Outcome:
    return await ctx.once("v2-tool-turns", _run_tool_turns)


async def _run_tool_turns(ctx: CheckContext) -> _ToolTurns | Outcome:
    spec = ctx.tools.write
    target = ctx.work / "v2-kit-notes.txt"
    script = None if spec is None else [tool_turn(spec, str(target), "noted\n"), final_turn()]
    opened = await v2_turn_session(ctx, script)
    if isinstance(opened, Outcome):
        return opened
    run, session_id = opened
    answers = []
    for text in (_TOOL_PROMPT, _SECOND_PROMPT):
        turn = await prompted_to_idle(ctx, run, session_id, text)
        if isinstance(turn, Outcome):
            return turn
        answers.append(turn[0])
    return _ToolTurns(run, session_id, answers)


async def _observed(ctx: CheckContext) -> list[AgentRun] | Outcome:
    """The scenario's v2 runs once the echo turn and the tool turns were driven."""
    found = await v2_run_with_sessions(ctx, None)
    if isinstance(found, Outcome):
        return found
    await echo_turn(ctx)
    turns = await _tool_turns(ctx)
    if not isinstance(turns, Outcome):
        ctx.current = turns.run
    return [
        run
        for run in ctx.runtime.runs
        if not run.version_unknown and (run.init_result or {}).get("protocolVersion") == V2
    ]


def _agent_messages(
    runs: list[AgentRun], method: str
) -> Iterator[tuple[AgentRun, Frame, dict[str, Any]]]:
    """Every message the agents sent with ``method``: (run, frame, message)."""
    for run in runs:
        for frame, msg in agent_messages(run.frames, method):
            yield run, frame, msg


def _agent_updates(runs: list[AgentRun]) -> Iterator[tuple[AgentRun, Frame, dict[str, Any]]]:
    for run in runs:
        for frame, _, update in session_updates(run.frames):
            yield run, frame, update


#: Judges one update: None when it is not of a kind the check judges, else its problems.
UpdateJudge = Callable[[dict[str, Any]], "list[str] | None"]


def _judge_each(runs: list[AgentRun], judge: UpdateJudge) -> tuple[list[tuple[int, str]], int]:
    """``judge`` over every update of the agents: (frame seq, problem) pairs, updates judged."""
    problems: list[tuple[int, str]] = []
    judged = 0
    for _, frame, update in _agent_updates(runs):
        found = judge(update)
        if found is None:
            continue
        judged += 1
        problems.extend((frame.seq, problem) for problem in found)
    return problems, judged


def _verdict(problems: list[tuple[int, str]], judged: int, what: str, absent: str) -> Outcome:
    if problems:
        return failed("; ".join(p for _, p in problems[:3]), frames=[s for s, _ in problems[:5]])
    if not judged:
        return not_applicable(absent)
    return passed(f"{judged} {what}")


def _message_id_problems(update: dict[str, Any]) -> list[str] | None:
    kind = update.get("sessionUpdate")
    if kind not in MESSAGE_KINDS:
        return None
    message_id = update.get("messageId")
    return [] if _filled(message_id) else [f"{kind} with messageId {message_id!r}"]


def _tool_call_id_problems(update: dict[str, Any]) -> list[str] | None:
    kind = update.get("sessionUpdate")
    if kind not in ("tool_call_update", "tool_call_content_chunk"):
        return None
    if not _filled(update.get("toolCallId")):
        return [f"{kind} with toolCallId {update.get('toolCallId')!r}"]
    if kind == "tool_call_content_chunk" and update.get("content") is None:
        return ["tool_call_content_chunk without content"]
    return []


def _plan_id_problems(update: dict[str, Any]) -> list[str] | None:
    if update.get("sessionUpdate") != "plan_update":
        return None
    plan = update.get("plan")
    plan_id = plan.get("planId") if isinstance(plan, dict) else None
    return [] if _filled(plan_id) else [f"plan_update whose plan has planId {plan_id!r}"]


@check_given("version.v2-message-ids", V2_SCENARIO, _observed)
async def v2_messages_are_named(ctx: CheckContext, runs: list[AgentRun]) -> Outcome:
    problems, judged = _judge_each(runs, _message_id_problems)
    turns = await _tool_turns(ctx)
    if isinstance(turns, Outcome):
        why = f"message updates named; the two prompts were not judged ({turns.reason})"
        return _verdict(problems, judged, why, f"no messages ({turns.reason})")
    ids = [a.result.get("messageId") if isinstance(a.result, dict) else None for a in turns.answers]
    if ids[0] == ids[1]:
        problems.append(
            (
                turns.answers[1].frame.seq,
                f"two prompts of one session both got messageId {ids[0]!r}",
            )
        )
    return _verdict(
        problems, judged, "message updates named; two prompts got two messageIds", "no messages"
    )


@check_given("version.v2-tool-call-ids", V2_SCENARIO, _observed)
async def v2_tool_calls_are_named(ctx: CheckContext, runs: list[AgentRun]) -> Outcome:
    problems, judged = _judge_each(runs, _tool_call_id_problems)
    return _verdict(
        problems,
        judged,
        "tool call updates named their tool call",
        "no tool call updates were sent",
    )


@check_given("version.v2-plan-ids", V2_SCENARIO, _observed)
async def v2_plans_are_named(ctx: CheckContext, runs: list[AgentRun]) -> Outcome:
    problems, judged = _judge_each(runs, _plan_id_problems)
    return _verdict(problems, judged, "plan updates named their plan", "no plan updates were sent")


def _base64_problem(data: object) -> str | None:
    if not isinstance(data, str):
        return f"data {data!r} is not a string"
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"data {data[:40]!r} is not standalone base64"
    return None


@check_given("version.v2-terminal-updates", V2_SCENARIO, _observed)
async def v2_terminals_keep_their_cwd(ctx: CheckContext, runs: list[AgentRun]) -> Outcome:
    problems: list[tuple[int, str]] = []
    judged = 0
    cwds: dict[tuple[str, object, object], str] = {}
    for run, frame, update in _agent_updates(runs):
        kind = update.get("sessionUpdate")
        if kind == "terminal_output_chunk":
            judged += 1
            if (problem := _base64_problem(update.get("data"))) is not None:
                problems.append((frame.seq, f"terminal_output_chunk {problem}"))
        if kind != "terminal_update":
            continue
        judged += 1
        output = update.get("output")
        if isinstance(output, dict) and (problem := _base64_problem(output.get("data"))):
            problems.append((frame.seq, f"terminal_update output {problem}"))
        cwd = update.get("cwd")
        if cwd is None:
            continue
        if not (isinstance(cwd, str) and PurePath(cwd).is_absolute()):
            problems.append((frame.seq, f"terminal_update with relative cwd {cwd!r}"))
            continue
        session = (frame.message.get("params") or {}).get("sessionId")
        key = (run.id, session, update.get("terminalId"))
        first = cwds.setdefault(key, cwd)
        if first != cwd:
            problems.append(
                (
                    frame.seq,
                    f"terminal {update.get('terminalId')!r} moved from {first!r} to {cwd!r}",
                )
            )
    return _verdict(
        problems, judged, "terminal updates well-formed", "no terminal updates were sent"
    )


@check_given("version.v2-open-enums", V2_SCENARIO, _observed)
async def v2_open_enum_values_are_known(ctx: CheckContext, runs: list[AgentRun]) -> Outcome:
    problems, judged = [], 0
    for _, frame, update in _agent_updates(runs):
        kind = update.get("sessionUpdate")
        values: list[tuple[str, object, frozenset[str]]] = []
        if kind == "tool_call_update":
            for field, defined in (("kind", TOOL_KINDS), ("status", TOOL_STATUSES)):
                if update.get(field) is not None:
                    values.append((f"tool call {field}", update[field], defined))
        elif kind == "plan_update":
            plan = update.get("plan")
            for entry in plan.get("entries") or [] if isinstance(plan, dict) else []:
                if not isinstance(entry, dict):
                    continue
                for field, defined in (("priority", PLAN_PRIORITIES), ("status", PLAN_STATUSES)):
                    if field in entry:
                        values.append((f"plan entry {field}", entry[field], defined))
        for what, value, defined in values:
            judged += 1
            if not _known(value, defined):
                problems.append((frame.seq, f"{what} {value!r} is neither ACP's nor _-prefixed"))
    return _verdict(
        problems,
        judged,
        "tool call and plan enum values known or _-prefixed",
        "no tool call kinds or statuses, nor plan entries, were sent",
    )


def _permission_problems(params: Any) -> list[str]:
    problems = [
        f"invalid: {e}" for e in v2_problems("session/request_permission", "params", params)
    ]
    if not isinstance(params, dict):
        return problems or ["params are not an object"]
    if not _filled(params.get("title")):
        problems.append(f"title {params.get('title')!r}")
    options = params.get("options")
    if not isinstance(options, list) or not options:
        problems.append(f"options {options!r}")
    for option in options if isinstance(options, list) else []:
        missing = [
            key
            for key in ("optionId", "name", "kind")
            if not (isinstance(option, dict) and option.get(key))
        ]
        if missing:
            problems.append(f"option {option!r} lacks {', '.join(missing)}")
    return problems


@check_given("version.v2-permission-requests", V2_SCENARIO, _observed)
async def v2_permission_requests_are_well_formed(
    ctx: CheckContext, runs: list[AgentRun]
) -> Outcome:
    asked = 0
    for run, frame, msg in _agent_messages(runs, "session/request_permission"):
        asked += 1
        params = msg.get("params") or {}
        if problems := _permission_problems(params):
            return failed(
                "session/request_permission: " + "; ".join(problems[:3]), frames=[frame.seq]
            )
        session_id = str(params.get("sessionId"))
        if not any(is_idle(f, session_id) for f in run.frames[frame.seq :]):
            return failed(
                "the turn never ended idle after its permission request was answered",
                frames=[frame.seq],
            )
    if not asked:
        return not_applicable("no permission was asked for during the v2 turns")
    return passed(f"{asked} permission requests well-formed; each turn went on to idle")
