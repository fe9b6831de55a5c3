"""v2 elicitation, provoked on purpose (issue 36, item 4): the one scenario where the checker
advertises ``capabilities.elicitation`` (form and URL mode) and the scripted model calls the
agent's tool that asks the user (``--tools``: iac-code's ``ask_user``). The checker accepts
every question (:mod:`..harness.elicitation_answers`) and judges each ``elicitation/create``
and ``elicitation/complete`` against the v2 schema.

The check starts a v2 agent of its own: every other v2 agent is a client without elicitation,
which the gating rules (``version.v2-no-unadvertised-client-methods``) judge.
"""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import AgentExited, AgentTimeout
from ..harness.client_side import ClientSide
from ..outcomes import Outcome, failed, not_applicable, passed
from ..requirements import check
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.scripted_turns import final_turn, tool_turn
from ..scenarios.v2_agent import (
    V2_SCENARIO,
    accepted_prompt,
    fresh_v2_run,
    v2_problems,
    v2_run,
    v2_session,
    wait_idle,
)

#: What the checker's client says it can show: both modes of the v2 draft.
ELICITATION: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
_QUESTION = ("Which region should the scripted task use?", "eu-west-1", "us-east-1")
_METHODS = ("elicitation/create", "elicitation/complete")


async def _asking_agent(ctx: CheckContext) -> tuple[AgentRun, str] | Outcome:
    """A v2 agent of this check's own whose client advertised elicitation, and its session."""
    assert ctx.tools.ask is not None
    script = [tool_turn(ctx.tools.ask, *_QUESTION), final_turn()]
    client = ClientSide(ctx.work, fs_read=False, fs_write=False, terminal=False, elicitation=True)
    run = await fresh_v2_run(
        ctx, ELICITATION, for_this_check=True, client=client, llm_script=script
    )
    if isinstance(run, Outcome):
        return run
    session_id = await v2_session(ctx, run)
    return session_id if isinstance(session_id, Outcome) else (run, session_id)


def _problems(method: str, params: Any, draft: str) -> list[str]:
    problems = v2_problems(method, "params", params, draft)
    mode = params.get("mode") if isinstance(params, dict) else None
    if method == "elicitation/create" and mode not in ("form", "url"):
        problems.append(f"mode {mode!r} is neither form nor url")
    return problems


@check("version.v2-elicitation-requests", scenario=V2_SCENARIO)
async def v2_elicitations_are_well_formed(ctx: CheckContext) -> Outcome:
    shared = await v2_run(ctx)  # the negotiation and echo verdicts, memoised
    if isinstance(shared, Outcome):
        return shared
    if ctx.tools.ask is None:
        return not_applicable(
            f"tool vocabulary {ctx.tools.name!r} names no tool that asks the user, so the "
            "scripted model cannot make the agent elicit"
        )
    found = await _asking_agent(ctx)
    if isinstance(found, Outcome):
        return found
    run, session_id = found
    answer = await accepted_prompt(ctx, run, session_id, "Ask me before you go on.")
    if isinstance(answer, Outcome):
        return answer
    try:
        idle = await wait_idle(ctx, run, session_id, answer.frame.seq)
    except (AgentTimeout, AgentExited) as exc:
        asked = [f.seq for f in run.frames[answer.frame.seq :] if _method(f.message) in _METHODS]
        return failed(f"no state_update idle after the elicited turn: {exc}", frames=asked[:3])
    modes: list[str] = []
    for frame in run.frames[answer.frame.seq : idle.seq + 1]:
        method = _method(frame.message)
        if frame.direction != "a2c" or method not in _METHODS:
            continue
        params = frame.message.get("params")
        if problems := _problems(method, params, ctx.config.v2_draft):
            return failed(f"{method}: " + "; ".join(problems[:3]), frames=[frame.seq])
        if method == "elicitation/create":
            modes.append(str(params.get("mode")))
    if not modes:
        return not_applicable(
            f"the agent asked nothing: the scripted model called {ctx.tools.ask.name!r} with "
            "form and URL elicitation advertised, and no elicitation/create came (the agent "
            "may not implement elicitation)"
        )
    return passed(
        f"{len(modes)} elicitation requests ({', '.join(sorted(set(modes)))} mode) valid v2; "
        "the turn went on to idle",
        frames=[answer.frame.seq, idle.seq],
    )


def _method(message: object) -> object:
    return message.get("method") if isinstance(message, dict) else None
