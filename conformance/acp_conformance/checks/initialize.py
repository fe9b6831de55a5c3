"""init.* and auth.*: initialize (version negotiation, capability and identity shapes) and
the auth surface it advertises."""

from __future__ import annotations

from typing import Any

from ..harness.agent_client import AgentExited, AgentTimeout, Response
from ..outcomes import Outcome, failed, not_applicable, passed
from ..requirements import check
from ..scenarios._expect import brief, exchange_frames, expect_result, result_dict
from ..scenarios.catalog import INIT
from ..scenarios.check_context import CheckContext

#: The largest version the schema's uint16 allows: certainly not supported, yet valid on the wire.
UNSUPPORTED_VERSION = 65535


async def _initialize_fresh(ctx: CheckContext, version: Any) -> Response:
    """A new process's answer to its first initialize (asking for ``version``)."""
    run = await ctx.spawn(initialize=False, for_this_check=True)
    params = ctx.runtime.initialize_params(run, version)
    return await run.live.request("initialize", params)


async def _fresh_v1_answer(ctx: CheckContext) -> Response:
    """A new process's answer to a version 1 initialize; init.responds and
    init.version-negotiation judge the same answer, so one process is asked (each process
    of a slow-starting agent costs seconds). A process that answered with a result goes on as
    the scenario's shared agent: its initialize is the one the shared agent would be sent."""
    memo = ctx.runtime.memo
    if "fresh-v1" not in memo:
        run = await ctx.spawn(initialize=False)
        params = ctx.runtime.initialize_params(run, 1)
        response = await run.live.request("initialize", params)
        if not ctx.runtime.adopt_as_shared(run, params, response):
            ctx.own_runs.append(run)  # stopped when this check ends, like any one-off
        memo["fresh-v1"] = response, run
    response, ctx.current = memo["fresh-v1"]
    return response


def _version_of(response: Response) -> Any:
    return result_dict(response).get("protocolVersion")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@check("init.responds", scenario=INIT)
async def initialize_is_answered(ctx: CheckContext) -> Outcome:
    try:
        response = await _fresh_v1_answer(ctx)
    except (AgentTimeout, AgentExited) as exc:
        return failed(str(exc))
    frames = [response.frame.seq]
    if response.is_error:
        return failed(f"initialize failed: {brief(response.frame)}", frames=frames)
    result = result_dict(response)
    missing = [k for k in ("protocolVersion",) if k not in result]
    if missing or not isinstance(result.get("agentCapabilities", {}), dict):
        return failed(
            f"initialize result lacks {missing or 'an agentCapabilities object'}", frames=frames
        )
    return passed("initialize answered", frames=frames)


@check("init.version-negotiation", scenario=INIT)
async def version_one_is_negotiated(ctx: CheckContext) -> Outcome:
    response = await _fresh_v1_answer(ctx)
    version = _version_of(response)
    if not _is_int(version) or not 1 <= version <= 1:
        return failed(f"asked for 1, got protocolVersion {version!r}", frames=[response.frame.seq])
    return passed("asked for 1, got 1", frames=[response.frame.seq])


@check("init.unsupported-version-not-echoed", scenario=INIT)
async def unsupported_version_is_not_echoed(ctx: CheckContext) -> Outcome:
    response = await _initialize_fresh(ctx, UNSUPPORTED_VERSION)
    version = _version_of(response)
    if response.is_error:
        return failed(
            f"initialize with version {UNSUPPORTED_VERSION} failed instead of negotiating: "
            f"{brief(response.frame)}",
            frames=[response.frame.seq],
        )
    if not _is_int(version) or version == UNSUPPORTED_VERSION or version < 1:
        return failed(
            f"asked for {UNSUPPORTED_VERSION}, got protocolVersion {version!r}",
            frames=[response.frame.seq],
        )
    return passed(f"asked for {UNSUPPORTED_VERSION}, got {version}", frames=[response.frame.seq])


@check("init.version-zero", scenario=INIT)
async def version_zero_gets_supported_version(ctx: CheckContext) -> Outcome:
    response = await _initialize_fresh(ctx, 0)
    version = _version_of(response)
    if (bad := expect_result(response, "initialize with version 0")) is not None:
        return bad
    if not _is_int(version) or version < 1:
        return failed(f"asked for 0, got protocolVersion {version!r}", frames=[response.frame.seq])
    return passed(f"asked for 0, got {version}", frames=[response.frame.seq])


@check("init.capabilities-shape", scenario=INIT)
async def capabilities_have_the_right_shape(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    result = run.init_result or {}
    caps = result.get("agentCapabilities")
    if caps is not None and not isinstance(caps, dict):
        return failed(f"agentCapabilities is {type(caps).__name__}, not an object")
    auth = result.get("authMethods")
    if auth is not None and not isinstance(auth, list):
        return failed(f"authMethods is {type(auth).__name__}, not an array")
    prompt = (caps or {}).get("promptCapabilities")
    if prompt is not None and not (
        isinstance(prompt, dict)
        and all(isinstance(v, bool) for k, v in prompt.items() if k != "_meta")
    ):
        return failed(f"promptCapabilities has non-boolean flags: {prompt!r}")
    return passed("agentCapabilities and authMethods have the documented shapes", capabilities=caps)


@check("init.agent-info", scenario=INIT)
async def agent_info_is_given(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    info = (run.init_result or {}).get("agentInfo")
    if (
        not isinstance(info, dict)
        or not isinstance(info.get("name"), str)
        or not isinstance(info.get("version"), str)
    ):
        return failed(f"agentInfo missing or incomplete: {info!r}")
    return passed(f"{info['name']} {info['version']}", agentInfo=info)


@check("init.repeatable", scenario=INIT)
async def second_initialize_is_consistent(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    params = run.init_params or ctx.runtime.initialize_params(run)
    response = await run.live.request("initialize", params)
    if (bad := expect_result(response, "a second initialize")) is not None:
        return bad
    again = result_dict(response)
    first = run.init_result or {}
    if again.get("protocolVersion") != first.get("protocolVersion") or again.get(
        "agentCapabilities"
    ) != first.get("agentCapabilities"):
        return failed("a second initialize answered differently", frames=[response.frame.seq])
    return passed("second initialize answered the same", frames=[response.frame.seq])


@check("auth.methods-shape", scenario=INIT)
async def auth_methods_have_ids_and_names(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    methods = (run.init_result or {}).get("authMethods") or []
    if not isinstance(methods, list):
        return failed("authMethods is not an array")
    ids = []
    for method in methods:
        if (
            not isinstance(method, dict)
            or not isinstance(method.get("id"), str)
            or not isinstance(method.get("name"), str)
        ):
            return failed(f"auth method without string id/name: {method!r}")
        ids.append(method["id"])
    return passed(f"{len(ids)} auth methods: {', '.join(ids) or 'none'}")


@check("auth.method-ids-unique", scenario=INIT)
async def auth_method_ids_are_distinct(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    methods = (run.init_result or {}).get("authMethods") or []
    ids = [m.get("id") for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []
    if len(set(map(repr, ids))) != len(ids):
        return failed(f"duplicate auth method ids: {ids}")
    return passed(f"{len(ids)} distinct auth method ids")


@check("auth.unknown-method-rejected", scenario=INIT)
async def unknown_auth_method_is_rejected(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    response = await run.live.request(
        "authenticate", {"methodId": "acp-conformance-no-such-method"}
    )
    if not response.is_error:
        return failed(
            f"authenticate with an unknown method succeeded: {brief(response.frame)}",
            frames=[response.frame.seq],
        )
    # Any error rejects the method: ACP names no code for it (-32602 is the usual one).
    return passed(
        f"authenticate with an unknown method rejected with {response.error_code}",
        frames=exchange_frames(response),
    )


@check("auth.authenticate-advertised", scenario=INIT)
async def advertised_auth_method_works(ctx: CheckContext) -> Outcome:
    method = ctx.config.auth_method
    if not method:
        return not_applicable("no --auth-method given")
    run = await ctx.spawn(initialize=False, for_this_check=True)
    await ctx.runtime.initialize(run, authenticate=False)
    offered = [
        m.get("id") for m in (run.init_result or {}).get("authMethods") or [] if isinstance(m, dict)
    ]
    if method not in offered:
        return failed(f"--auth-method {method!r} is not among the advertised methods {offered}")
    response = await run.live.request("authenticate", {"methodId": method})
    if (bad := expect_result(response, f"authenticate {method!r}")) is not None:
        return bad
    return passed(f"authenticate {method!r} succeeded", frames=[response.frame.seq])


@check("auth.logout-works", scenario=INIT)
async def logout_succeeds_when_advertised(ctx: CheckContext) -> Outcome:
    run = await ctx.spawn(for_this_check=True)
    response = await run.live.request("logout", {})
    if (bad := expect_result(response, "logout")) is not None:
        return bad
    # Logged out is not dead: the agent must still answer (session/new may now want auth).
    after = await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    return passed(
        "logout succeeded and the agent still answers session/new "
        + ("(with an error)" if after.is_error else "(with a session)"),
        frames=[response.frame.seq, after.frame.seq],
    )
