"""robustness.*: hostile input — huge lines, bytes that are not UTF-8, and property-based
fuzzing of every advertised agent method with schema-drawn params.

Params are drawn by hypothesis-jsonschema from the method's params schema (see
``acp_conformance.fuzzing``); each draw is validated against the real schema before it
counts as valid. Mutations of the first draws (not an object, a required field missing or
of the wrong type, an extra junk field) are validated too: the schema-invalid ones must be
rejected, the ones that stay valid are judged like draws."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import anyio

from ..fuzzing import drawn_params, mutations, resolved_schema
from ..harness.agent_client import AgentExited, AgentTimeout, Pending, Response
from ..outcomes import NO_DEADLINE, Outcome, failed, not_applicable, passed, soft_failed
from ..requirements import check
from ..scenarios._expect import expect_result
from ..scenarios.catalog import FUZZ, ROBUSTNESS
from ..scenarios.check_context import AgentRun, CheckContext, advertised, surface_value
from ..validation import load_backend, method_index

#: Prompts start model turns (slow, and not what this probes); aliases are project-specific.
_SKIPPED = {"session/prompt"}


#: Methods without a capability flag that exist only when the session offers what they set:
#: an agent without modes (config options) does not serve set_mode (set_config_option).
OFFERED_WITH = {
    "session/set_mode": "session.modes",
    "session/set_config_option": "session.configOptions",
}


#: Mutations made of the first this-many draws per method.
_MUTATED_DRAWS = 2
#: A schema-invalid request still unanswered this long after the agent answered a request
#: sent behind it is taken as never to be answered (instead of one full --timeout).
GRACE_AFTER_LATER_ANSWER = 5.0


#: Drawing and sending every case takes longer than one exchange: 40 x --timeout.
FUZZ_BUDGET = 40

#: Fuzzed requests in flight at once; their answers are still judged one by one. An agent
#: that needs about a second per session/new (claude-agent-acp starts a Claude Code process
#: for each) went through its ~180 draws one after another in 27-45 s. JSON-RPC lets a client
#: send without waiting, as editors do, so an agent that breaks with four requests open is
#: broken; a death is blamed on the requests that got no answer, the earliest first.
IN_FLIGHT = 4


@dataclass
class MethodCases:
    """What the fuzz checks send for one method."""

    schema: dict[str, Any]
    #: Schema-valid params: drawn ones, then mutations that turned out still valid.
    valid: list[tuple[str, Any]] = field(default_factory=list)
    #: Schema-invalid mutations: (what was broken, params).
    invalid: list[tuple[str, Any]] = field(default_factory=list)


def fuzzable_methods(surface: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for method, entry in method_index().items():
        if entry.get("side") != "agent" or entry.get("kind") != "request" or method in _SKIPPED:
            continue
        if entry.get("stability") == "alias":
            continue
        gate = entry.get("capability") or OFFERED_WITH.get(method)
        if gate and not advertised(surface_value(surface, gate)):
            continue
        out.append((method, entry))
    return out


def build_cases(method: str, entry: dict[str, Any], count: int, backend: Any) -> MethodCases:
    """Draw ``count`` params for ``method`` and sort them and their mutations by validity."""
    cases = MethodCases(resolved_schema(entry["file"], entry["params"]))
    drawn = [
        value
        for value in drawn_params(entry["file"], entry["params"], count)
        if not backend.validate_params(method, value)
    ]
    cases.valid = [("drawn", value) for value in drawn]
    for value in drawn[:_MUTATED_DRAWS]:
        for label, variant in mutations(cases.schema, value):
            if backend.validate_params(method, variant):
                cases.invalid.append((label, variant))
            else:
                cases.valid.append((f"{label} (still schema-valid)", variant))
    return cases


async def _cases(ctx: CheckContext) -> dict[str, MethodCases]:
    """Per advertised method, the params to send (drawn once per scenario, off the loop)."""
    memo = ctx.runtime.memo
    if "cases" not in memo:
        surface = await ctx.surface()
        count = ctx.config.fuzz_examples
        backend = load_backend()

        def build() -> dict[str, MethodCases]:
            return {
                method: build_cases(method, entry, count, backend)
                for method, entry in fuzzable_methods(surface)
            }

        memo["cases"] = await anyio.to_thread.run_sync(build)
    cases: dict[str, MethodCases] = memo["cases"]
    return cases


def defuse_mcp_servers(params: Any, ctx: CheckContext) -> Any:
    """Drawn MCP server entries, pointed at nothing: a stdio ``command`` becomes a path that
    does not exist inside the sandbox and a ``url`` a port that refuses connections. The
    checker must never make the agent run a random program or call a random host."""
    if not isinstance(params, dict) or not isinstance(params.get("mcpServers"), list):
        return params
    servers = []
    for server in params["mcpServers"]:
        if isinstance(server, dict):
            server = dict(server)
            if "command" in server:
                server["command"] = str(ctx.work / "no-such-mcp-server")
            if "url" in server:
                server["url"] = "http://127.0.0.1:9/mcp"
        servers.append(server)
    return {**params, "mcpServers": servers}


def stay_on_v1(method: str, params: Any) -> Any:
    """A drawn ``initialize`` asking for version 2 or more, asking for 1 instead. The fuzz
    scenario judges every answer by the v1 schemas on one connection; a v2 agent rightly
    answers such a draw with 2 and from then on speaks v2 there, which the fuzzer would
    misjudge. Version negotiation has rules of its own (``init.*``, ``version.v2-*``). Only
    schema-valid draws are pinned: a mutation's out-of-range version must stay out of range."""
    if method != "initialize" or not isinstance(params, dict):
        return params
    asked = params.get("protocolVersion")
    if isinstance(asked, int) and not isinstance(asked, bool) and asked >= 2:
        return {**params, "protocolVersion": 1}
    return params


def _ground(params: Any, ctx: CheckContext, session_id: str, rng: random.Random) -> Any:
    """Point half of the draws at a real session and the real work dir, so the agent's
    code paths past the session lookup get exercised too."""
    if isinstance(params, dict) and rng.random() < 0.5:
        params = dict(params)
        if "sessionId" in params:
            params["sessionId"] = session_id
        if "cwd" in params:
            params["cwd"] = str(ctx.work)
    return defuse_mcp_servers(params, ctx)


def _problem(method: str, response: Response, backend: Any) -> str | None:
    msg = response.message
    if "error" in msg:
        err = msg["error"]
        if not (
            isinstance(err, dict)
            and isinstance(err.get("code"), int)
            and isinstance(err.get("message"), str)
        ):
            return f"malformed error {err!r}"
        return None
    errors = backend.validate_result(method, msg.get("result"))
    return f"schema-invalid result: {'; '.join(errors[:2])}" if errors else None


async def _still_alive(run: AgentRun, sent: int) -> None:
    """A last round trip: the agent must survive its answer to the final fuzzed request."""
    try:
        await run.live.barrier()
    except (AgentExited, AgentTimeout) as exc:
        raise _Dead(
            failed(f"the agent stopped answering after {sent} fuzzed requests: {exc}")
        ) from exc


class _Dead(Exception):
    """The agent stopped answering; carries the failing outcome."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome


@dataclass
class _Case:
    """One fuzzed request: what it calls, how its params were made, the params."""

    method: str
    label: str
    params: Any

    def __str__(self) -> str:
        return f"{self.method} ({self.label}) with params {self.params!r:.300}"


def _named(cases: list[_Case]) -> str:
    """The requests a death is blamed on, the earliest sent first (most agents answer in
    order, so it is the likeliest cause)."""
    if len(cases) == 1:
        return str(cases[0])
    others = "; ".join(str(c) for c in cases[1:])
    return f"{cases[0]}, the earliest of {len(cases)} suspects (the others: {others})"


async def _exchange(run: AgentRun, cases: list[_Case], *, invalid: bool) -> list[Response]:
    """Every case's answer, in order, ``IN_FLIGHT`` requests at a time; raises `_Dead` when
    the agent dies or stops answering. Invalid cases get `_answer_to_invalid`'s shorter
    patience; valid ones the full ``--timeout`` each."""
    answers: list[Response] = []
    previous: list[_Case] = []  # the batch answered last: a death before any write is theirs
    for first in range(0, len(cases), IN_FLIGHT):
        batch = cases[first : first + IN_FLIGHT]
        written: list[tuple[_Case, Pending]] = []
        try:
            for case in batch:
                handle = await run.live.start_request(case.method, case.params, deliberate=invalid)
                written.append((case, handle))
            for case, handle in written:
                if invalid:
                    answers.append(await _answer_to_invalid(run, handle, case, len(answers)))
                else:
                    answers.append(await handle.wait())
        except AgentExited as exc:
            # The requests still without an answer are the suspects; an agent that answered
            # everything it was sent and then died is blamed on what it answered last.
            open_ = [case for case, handle in written if not handle.arrived.is_set()]
            why = f"the agent died after {_named(open_ or [c for c, _ in written] or previous)}"
            raise _Dead(failed(why, sent=len(answers))) from exc
        except AgentTimeout as exc:
            what = f"no answer to {cases[len(answers)]}"
            raise _Dead(soft_failed(what, NO_DEADLINE, sent=len(answers))) from exc
        previous = batch
    return answers


async def _fuzzed(
    ctx: CheckContext, *, invalid: bool
) -> tuple[int, list[tuple[_Case, Response]]] | Outcome:
    """The fuzzed requests of one kind (schema-valid draws on a new session, or schema-invalid
    mutations), each with its answer, and how many methods they cover; or why not judged."""
    cases = await _cases(ctx)
    if not cases or ctx.config.fuzz_examples == 0:
        return not_applicable("no fuzzable methods (or --fuzz-examples 0)")
    run = await ctx.agent()
    if invalid:
        sending = [
            _Case(method, label, defuse_mcp_servers(params, ctx))
            for method, method_cases in cases.items()
            for label, params in method_cases.invalid
        ]
    else:
        session_id = await ctx.new_session(run)
        rng = random.Random(7)
        sending = [
            _Case(method, label, _ground(stay_on_v1(method, params), ctx, session_id, rng))
            for method, method_cases in cases.items()
            for label, params in method_cases.valid
        ]
    answers = await _answered(run, sending, invalid=invalid)
    if isinstance(answers, Outcome):
        return answers
    return len(cases), list(zip(sending, answers, strict=True))


async def _answered(
    run: AgentRun, cases: list[_Case], *, invalid: bool
) -> list[Response] | Outcome:
    """Every case's answer (:func:`_exchange`) and a last round trip the agent survived, or
    the failure when it died or stopped answering."""
    try:
        answers = await _exchange(run, cases, invalid=invalid)
        await _still_alive(run, len(answers))
    except _Dead as dead:
        return dead.outcome
    return answers


async def _answer_to_invalid(run: AgentRun, handle: Pending, case: _Case, sent: int) -> Response:
    """The answer to a schema-invalid request, waited for until ``GRACE_AFTER_LATER_ANSWER``
    after the agent answered a barrier sent behind it (an agent that drops a request it
    cannot parse shows that in seconds, not in a full ``--timeout``)."""
    try:
        return await handle.wait(GRACE_AFTER_LATER_ANSWER)
    except AgentTimeout:
        pass
    try:
        await run.live.barrier()
    except AgentTimeout as exc:
        why = f"no answer to {case}, nor to a request sent after it"
        raise _Dead(soft_failed(why, NO_DEADLINE, sent=sent)) from exc
    try:
        return await handle.wait(GRACE_AFTER_LATER_ANSWER)
    except AgentTimeout as exc:
        why = (
            f"no answer to {case}: the agent answered a request sent after it, and nothing "
            f"followed within {GRACE_AFTER_LATER_ANSWER:g} s"
        )
        raise _Dead(soft_failed(why, NO_DEADLINE, sent=sent)) from exc


@check("robustness.fuzz-valid-params", scenario=FUZZ, budget=FUZZ_BUDGET)
async def drawn_params_get_valid_answers(ctx: CheckContext) -> Outcome:
    fuzzed = await _fuzzed(ctx, invalid=False)
    if isinstance(fuzzed, Outcome):
        return fuzzed
    methods, answered = fuzzed
    backend = load_backend()
    problems = [
        (response.frame.seq, f"{case.method} ({case.label}): {why}")
        for case, response in answered
        if (why := _problem(case.method, response, backend)) is not None
    ]
    sent = len(answered)
    if problems:
        headline = f"{len(problems)} of {sent} answers were not a valid result or error"
        return _failed_on(problems, headline, "problems")
    return passed(
        f"{sent} schema-valid requests (hypothesis-jsonschema draws) over {methods} methods "
        f"answered with a valid result or error ({IN_FLIGHT} in flight at a time)"
    )


@check("robustness.fuzz-invalid-params", scenario=FUZZ, budget=FUZZ_BUDGET)
async def mutated_params_get_errors(ctx: CheckContext) -> Outcome:
    fuzzed = await _fuzzed(ctx, invalid=True)
    if isinstance(fuzzed, Outcome):
        return fuzzed
    _, answered = fuzzed
    accepted = [
        (response.frame.seq, f"{case.method} accepted params with {case.label}")
        for case, response in answered
        if not response.is_error
    ]
    sent = len(answered)
    if accepted:
        headline = f"{len(accepted)} of {sent} schema-invalid requests succeeded"
        return _failed_on(accepted, headline, "accepted")
    return passed(f"{sent} schema-invalid requests all rejected")


def _failed_on(offences: list[tuple[int, str]], headline: str, listed_as: str) -> Outcome:
    """A fuzz failure: ``headline`` and the first offence, the frames of the first ten and
    the first twenty offences as evidence under ``listed_as`` (a fuzz run can offend
    hundreds of times; the report shows a sample)."""
    sample = {listed_as: [why for _, why in offences[:20]]}
    return failed(
        f"{headline}: {offences[0][1]}", frames=[seq for seq, _ in offences[:10]], **sample
    )


OVERSIZED_BYTES = 2 * 1024 * 1024


async def _still_usable(ctx: CheckContext, run: AgentRun, what: str) -> Outcome:
    try:
        response = await run.live.request("session/new", {"cwd": str(ctx.work), "mcpServers": []})
    except AgentExited:
        return failed(f"the agent exited after {what}")
    except AgentTimeout:
        return failed(f"the agent stopped answering after {what}")
    if (bad := expect_result(response, f"session/new after {what}")) is not None:
        return bad
    return passed(f"still usable after {what}", frames=[response.frame.seq])


@check("robustness.oversized-line", scenario=ROBUSTNESS)
async def oversized_line_is_survived(ctx: CheckContext) -> Outcome:
    run = await ctx.agent()
    garbage = (
        b'{"jsonrpc":"2.0","id":"big","method":"_x","params":{"pad":"'
        + b"x" * OVERSIZED_BYTES
        + b'"'
    )
    await run.live.send_line(garbage, deliberate=True)
    return await _still_usable(ctx, run, f"a {len(garbage)}-byte invalid line")


@check("robustness.invalid-utf8", scenario=ROBUSTNESS)
async def invalid_utf8_is_survived(ctx: CheckContext) -> Outcome:
    # The scenario's agent as the oversized line left it (one process fewer to start), unless
    # that check left doubt: it failed (retired the run) or left a request unanswered.
    run = await ctx.agent()
    if not ctx.runtime.reusable(run):
        run = await ctx.spawn(for_this_check=True)
    await run.live.send_line(b'{"jsonrpc":"2.0","id":77,"method":"\xff\xfe"}', deliberate=True)
    return await _still_usable(ctx, run, "a line with invalid UTF-8")
