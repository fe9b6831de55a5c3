"""version.v2-* (auth): protocol version 2's authentication methods beyond their advertised
types (which :mod:`.v2_basics` judges): a terminal method offered to a client that declared
terminal auth is well-formed, and an agent that advertises auth methods serves
``auth/logout`` and ``auth/login`` (the latter with the method the operator names with
``--auth-method``; the checker never picks a login method itself). Each runs on a fresh v2
agent of its own, since logging in or out changes the agent's state."""

from __future__ import annotations

from typing import Any

from ..outcomes import Outcome, failed, not_applicable, out_of_scope, passed
from ..requirements import check
from ..scenarios._expect import brief, exchange_frames
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.v2_agent import (
    V2_SCENARIO,
    declined_v2,
    fresh_v2_run,
    v2_problems,
)


async def _fresh_v2(
    ctx: CheckContext, capabilities: dict[str, Any] | None = None
) -> AgentRun | Outcome:
    """A new v2 agent of this check's own, initialized with ``capabilities``."""
    return await fresh_v2_run(ctx, capabilities, for_this_check=True)


def _methods(run: AgentRun) -> list[dict[str, Any]]:
    methods = (run.init_result or {}).get("authMethods")
    return [m for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []


def _terminal_problems(method: dict[str, Any]) -> list[str]:
    name = method.get("methodId")
    problems = []
    args = method.get("args")
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        problems.append(f"terminal auth method {name!r} has args {args!r}, not strings")
    env = method.get("env")
    if env is None:
        return problems
    if not isinstance(env, list):
        return [*problems, f"terminal auth method {name!r} has env {env!r}, not an array"]
    names = []
    for entry in env:
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("name"), str)
            and isinstance(entry.get("value"), str)
        ):
            problems.append(f"terminal auth method {name!r} has env entry {entry!r}")
        else:
            names.append(entry["name"])
    if len(names) != len(set(names)):
        problems.append(f"terminal auth method {name!r} repeats env names {names}")
    return problems


@check("version.v2-terminal-auth-shape", scenario=V2_SCENARIO)
async def v2_terminal_auth_methods_are_well_formed(ctx: CheckContext) -> Outcome:
    run = await _fresh_v2(ctx, {"auth": {"terminal": {}}})
    if isinstance(run, Outcome):
        return run
    terminal = [m for m in _methods(run) if m.get("type") == "terminal"]
    if not terminal:
        return not_applicable("no terminal auth method is offered to a client that can run one")
    problems = [p for method in terminal for p in _terminal_problems(method)]
    if problems:
        return failed("; ".join(problems))
    return passed(f"{len(terminal)} terminal auth methods, args and env well-formed")


@check("version.v2-logout", scenario=V2_SCENARIO)
async def v2_logout_is_served(ctx: CheckContext) -> Outcome:
    run = await _fresh_v2(ctx)
    if isinstance(run, Outcome):
        return run
    if not _methods(run):
        return out_of_scope("the v2 agent advertises no auth methods")
    response = await run.live.request("auth/logout", {})
    frames = exchange_frames(response)
    if response.is_error or not isinstance(response.result, dict):
        return failed(f"auth/logout answered {brief(response.frame)}", frames=frames)
    if errors := v2_problems("auth/logout", "result", response.result):
        return failed("invalid v2 auth/logout result: " + "; ".join(errors), frames=frames)
    return passed("auth/logout answered a valid result", frames=frames)


@check("version.v2-login", scenario=V2_SCENARIO)
async def v2_login_is_served(ctx: CheckContext) -> Outcome:
    chosen = ctx.config.auth_method
    if (declined := declined_v2(ctx)) is not None:
        return declined  # before the missing --auth-method: no login would make it speak v2
    if not chosen:
        return not_applicable("no --auth-method given (the checker never picks a login itself)")
    run = await _fresh_v2(ctx)
    if isinstance(run, Outcome):
        return run
    offered = {m.get("methodId"): m for m in _methods(run)}
    if chosen not in offered:
        return not_applicable(f"--auth-method {chosen!r} is not among {sorted(map(str, offered))}")
    if offered[chosen].get("type") == "terminal":
        return not_applicable(f"{chosen!r} is a terminal method, which is never passed to login")
    login = await run.live.request("auth/login", {"methodId": chosen})
    frames = exchange_frames(login)
    if login.error_code == -32601:
        return failed(f"auth/login is not served: {brief(login.frame)}", frames=frames)
    if login.is_error:
        return not_applicable(f"auth/login {chosen!r} failed (credentials): {brief(login.frame)}")
    created = await run.live.request("session/new", {"cwd": str(ctx.work)})
    frames.append(created.frame.seq)
    if created.error_code == -32000:
        return failed(
            f"after auth/login {chosen!r} session/new still asks for auth: {brief(created.frame)}",
            frames=frames,
        )
    return passed(
        f"auth/login {chosen!r} succeeded; session/new did not ask for auth", frames=frames
    )
