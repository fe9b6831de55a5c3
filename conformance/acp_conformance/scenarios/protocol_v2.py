"""Protocol version 2: what changes when a client asks for 2 and the agent agrees.

The checks share one agent that was sent a v2 ``initialize`` (``info``/``capabilities``;
replaced after a failed check). An agent that answers 1 stays a v1 agent, and every other v2
requirement is then not applicable; so is an agent that echoes whatever version it is asked
for (it answers 65535 to 65535, too): its 2 does not mean it speaks v2, and the echo is
``init.unsupported-version-not-echoed``'s failure. When it answers 2, the checks drive what
v2 changes — ``session/new`` without ``mcpServers``, a ``session/prompt`` acknowledged with a
``messageId`` and finished by a ``state_update``, methods v2 removed — and validate each
answer against ``schema/v2``. The run-wide schema check validates the whole transcript of
these runs against v2 as well (:mod:`acp_conformance.versions`).
"""

from __future__ import annotations

import importlib
from typing import Any

from .. import __version__
from ..citations import acp, schema_requires
from ..harness.connection import AgentExited, AgentTimeout, Response
from ..harness.recorder import Frame
from ..outcomes import Outcome, failed, out_of_scope, passed
from ..requirements import REQUIREMENTS, Requirement, Tier, check
from ._expect import brief
from .base import AgentRun, CheckContext, scenario, text_prompt

V2 = 2
_REFERENCE = (
    acp("initialization", "Protocol version")
    + "; shapes: the ACP v2 draft schema as the official TypeScript SDK 2.4.0 ships it"
)


_V2_VERSION = (
    acp(
        "v2/initialization",
        "Protocol version",
        "If the Agent supports the requested version, it MUST respond with the same version. "
        "Otherwise, the Agent MUST respond with the latest version it supports",
    )
    + "; shapes: the ACP v2 draft schema as the official TypeScript SDK 2.4.0 ships it"
)
_V2_PROMPT = acp(
    "v2/prompt-lifecycle",
    "Prompt lifecycle",
    "When foreground work starts or resumes, the Agent MUST send a state_update notification "
    'with state: "running" ... it MUST report idle',
)
_V2_SHAPES = schema_requires("the v2 session/new params and result shapes", version=2)


def _register(
    id: str, tier: Tier, statement: str, *, llm: bool = False, reference: str = _REFERENCE
) -> None:
    if id in REQUIREMENTS:
        raise ValueError(f"duplicate requirement {id}")
    REQUIREMENTS[id] = Requirement(id, tier, statement, reference, None, llm)


_register(
    "version.v2-negotiation",
    Tier.MUST,
    "Asked for version 2, the agent answers 1 or 2; an answer of 2 is a valid v2 initialize "
    "result (info, capabilities).",
    reference=_V2_VERSION,
)
_register(
    "version.v2-newer-version",
    Tier.MUST,
    "Asked for version 3, an agent that speaks 2 answers 2, the newest version it supports.",
    reference=_V2_VERSION,
)
_register(
    "version.v2-session-new",
    Tier.MUST,
    "On a v2 connection session/new accepts params without mcpServers and answers a valid v2 "
    "result (no modes; configOptions by configId).",
    reference=_V2_SHAPES,
)
_register(
    "version.v2-prompt-lifecycle",
    Tier.MUST,
    "On a v2 connection session/prompt is answered with the user message's messageId, and the "
    "turn is reported by state_update running, then idle with a stopReason; every update is "
    "valid v2.",
    llm=True,
    reference=_V2_PROMPT,
)
# ACP's text asks only that an unknown method "should" get -32601.
_register(
    "version.v2-removed-methods",
    Tier.SHOULD,
    "On a v2 connection the v1-only methods session/load, session/set_mode and authenticate "
    "answer -32601 (method not found).",
)

V2_SCENARIO = scenario("protocol-v2", "protocol version 2 beside v1", weight=5)


def _validation() -> Any:
    return importlib.import_module("acp_schema.validation")


def _v2_initialize_params(version: int) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "info": {"name": "acp-conformance", "version": __version__},
        "capabilities": {},
    }


async def _spawn_v2(ctx: CheckContext, version: int = V2) -> tuple[AgentRun, Response]:
    run = await ctx.spawn(initialize=False)
    params = _v2_initialize_params(version)
    response = await run.live.request("initialize", params)
    if not response.is_error and isinstance(response.result, dict):
        run.init_params, run.init_result = params, response.result
    return run, response


def _answered_version(response: Response) -> object:
    result = response.result if isinstance(response.result, dict) else {}
    return result.get("protocolVersion")


#: No agent can support this version: one that answers it back echoes any version it is asked.
UNKNOWABLE_VERSION = 65535


async def _echoed(ctx: CheckContext) -> Response | None:
    """The agent's answer when it echoes a version it cannot know, else None (memoised)."""
    memo = ctx.runtime.memo
    if "v2-echo" not in memo:
        _, response = await _spawn_v2(ctx, UNKNOWABLE_VERSION)
        echoes = _answered_version(response) == UNKNOWABLE_VERSION
        memo["v2-echo"] = response if echoes else None
        if echoes:
            # Its "2" means nothing either: judging those runs by the v2 schemas would
            # charge the one echo defect again, as schema failures.
            for run in ctx.runtime.runs:
                run.version_unknown = True
    echoed: Response | None = memo["v2-echo"]
    return echoed


def _echo_outcome(echoed: Response) -> Outcome:
    return out_of_scope(
        f"the agent echoes any version it is asked for (asked for {UNKNOWABLE_VERSION}, it "
        f"answered {brief(echoed.frame, 120)}), so its answer 2 does not show that it speaks "
        "v2; the echo is init.unsupported-version-not-echoed's failure",
        frames=[echoed.frame.seq],
    )


async def _negotiated(ctx: CheckContext) -> tuple[AgentRun, Response]:
    """The scenario's v2 agent and its initialize answer (a new one after a failed check)."""
    memo = ctx.runtime.memo
    found: tuple[AgentRun, Response] | None = memo.get("v2-run")
    if found is None or not ctx.runtime.reusable(found[0]):
        found = memo["v2-run"] = await _spawn_v2(ctx)
    ctx.current = found[0]
    return found


async def _v2_run(ctx: CheckContext) -> tuple[AgentRun | None, Outcome | None]:
    """A run that negotiated 2, or the outcome that makes the check not applicable."""
    try:
        run, response = await _negotiated(ctx)
        if _answered_version(response) != V2:
            # An agent that speaks v1 only: the v2 rules do not apply to it.
            return None, out_of_scope(f"the agent answered {brief(response.frame)} to version 2")
        if (echoed := await _echoed(ctx)) is not None:
            run.version_unknown = True
            return None, _echo_outcome(echoed)
    except (AgentTimeout, AgentExited) as exc:
        return None, failed(f"initialize was not answered: {exc}")
    ctx.current = run
    return run, None


def _problems(method: str, part: str, value: Any) -> list[str]:
    validation = _validation()
    if part == "params":
        errors: list[str] = validation.validate_params(method, value, version=V2)
    else:
        errors = validation.validate_result(method, value, version=V2)
    return errors


@check("version.v2-negotiation", scenario=V2_SCENARIO)
async def version_two_is_negotiated(ctx: CheckContext) -> Outcome:
    try:
        _, response = await _negotiated(ctx)
        frames = [response.frame.seq]
        if response.is_error:
            return failed(f"initialize asking for 2 failed: {brief(response.frame)}", frames=frames)
        version = _answered_version(response)
        if version == 1:
            return passed("asked for 2, the agent stays with 1", frames=frames)
        # Only an agent that claims a version other than 1 needs the echo probe.
        if (echoed := await _echoed(ctx)) is not None:
            return _echo_outcome(echoed)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"initialize was not answered: {exc}")
    if version != V2:
        return failed(f"asked for 2, got protocolVersion {version!r}", frames=frames)
    errors = _problems("initialize", "result", response.result)
    if errors:
        return failed("the v2 initialize result is invalid: " + "; ".join(errors), frames=frames)
    return passed("asked for 2, got a valid v2 answer", frames=frames)


@check("version.v2-newer-version", scenario=V2_SCENARIO)
async def newer_version_gets_the_newest_supported(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
    try:
        _, three = await _spawn_v2(ctx, 3)
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"initialize was not answered: {exc}")
    version = _answered_version(three)
    if version != V2:
        return failed(f"asked for 3, got protocolVersion {version!r}", frames=[three.frame.seq])
    return passed("asked for 3, got 2", frames=[three.frame.seq])


@check("version.v2-session-new", scenario=V2_SCENARIO)
async def v2_session_new(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
    response = await run.live.request("session/new", {"cwd": str(ctx.work)})
    frames = [response.frame.seq]
    if response.is_error:
        return failed(f"v2 session/new failed: {brief(response.frame)}", frames=frames)
    errors = _problems("session/new", "result", response.result)
    if errors:
        return failed("invalid v2 session/new result: " + "; ".join(errors), frames=frames)
    return passed("v2 session/new answered in v2 shape", frames=frames)


def _is_idle(frame: Frame, session_id: str) -> bool:
    msg = frame.message
    if not isinstance(msg, dict) or msg.get("method") != "session/update":
        return False
    params = msg.get("params") or {}
    update = params.get("update") or {}
    return (
        params.get("sessionId") == session_id
        and update.get("sessionUpdate") == "state_update"
        and update.get("state") == "idle"
    )


@check("version.v2-prompt-lifecycle", scenario=V2_SCENARIO)
async def v2_prompt_lifecycle(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
    created = await run.live.request("session/new", {"cwd": str(ctx.work)})
    session_id = created.result.get("sessionId") if isinstance(created.result, dict) else None
    if not isinstance(session_id, str):
        return failed(f"v2 session/new gave no session id: {brief(created.frame)}")
    since = len(run.frames)
    answer = await run.live.request("session/prompt", text_prompt(session_id, "hello"))
    if answer.is_error:
        return failed(f"v2 session/prompt failed: {brief(answer.frame)}", frames=[answer.frame.seq])
    errors = _problems("session/prompt", "result", answer.result)
    if errors:
        return failed("invalid v2 prompt answer: " + "; ".join(errors), frames=[answer.frame.seq])
    try:
        idle = await run.live.wait_for(
            lambda f: _is_idle(f, session_id), since=since, what="state_update idle"
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"no state_update idle after the prompt: {exc}", frames=[answer.frame.seq])
    updates = [
        f
        for f in run.frames[since : idle.seq + 1]
        if f.direction == "a2c"
        and isinstance(f.message, dict)
        and f.message.get("method") == "session/update"
    ]
    bad = [
        f"#{f.seq}: {e}"
        for f in updates
        for e in _problems("session/update", "params", f.message.get("params"))
    ]
    if bad:
        return failed("invalid v2 updates: " + "; ".join(bad[:3]), frames=[idle.seq])
    states = [
        f.message["params"]["update"].get("state")
        for f in updates
        if f.message["params"]["update"].get("sessionUpdate") == "state_update"
    ]
    if states[:1] != ["running"]:
        return failed(f"the turn's states were {states}, not running … idle", frames=[idle.seq])
    stop = idle.message["params"]["update"].get("stopReason")
    if not isinstance(stop, str):
        return failed("state_update idle without a stopReason", frames=[idle.seq])
    return passed(
        f"prompt acknowledged, turn ended with {stop}", frames=[answer.frame.seq, idle.seq]
    )


@check("version.v2-removed-methods", scenario=V2_SCENARIO)
async def v1_only_methods_are_gone(ctx: CheckContext) -> Outcome:
    run, skip = await _v2_run(ctx)
    if run is None:
        assert skip is not None
        return skip
    calls = {
        "session/load": {"sessionId": "missing", "cwd": str(ctx.work), "mcpServers": []},
        "session/set_mode": {"sessionId": "missing", "modeId": "default"},
        "authenticate": {"methodId": "none"},
    }
    frames = []
    for method, params in calls.items():
        response = await run.live.request(method, params)
        frames.append(response.frame.seq)
        if response.error_code != -32601:
            return failed(f"v2 {method} answered {brief(response.frame)}", frames=frames)
    return passed(
        "session/load, session/set_mode and authenticate are unknown in v2", frames=frames
    )
