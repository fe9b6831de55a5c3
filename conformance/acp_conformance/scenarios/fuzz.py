"""Property-based fuzzing of every advertised agent method with schema-drawn params."""

from __future__ import annotations

import random
from typing import Any

import anyio

from ..fuzzing import generate, mutations, resolved_schema
from ..harness.connection import AgentExited, AgentTimeout
from ..outcomes import Outcome, failed, not_applicable, passed
from ..requirements import check
from ..validation import load_backend, method_index
from .base import AgentRun, CheckContext, advertised, scenario, surface_value

FUZZ = scenario("fuzz", "schema-generated and mutated params for every advertised method")

#: Prompts start model turns (slow, and not what this probes); aliases are project-specific.
_SKIPPED = {"session/prompt"}


def fuzzable_methods(surface: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for method, entry in method_index().items():
        if entry.get("side") != "agent" or entry.get("kind") != "request" or method in _SKIPPED:
            continue
        if entry.get("stability") == "alias":
            continue
        gate = entry.get("capability")
        if gate and not advertised(surface_value(surface, gate)):
            continue
        out.append((method, entry))
    return out


async def _examples(ctx: CheckContext) -> dict[str, tuple[dict[str, Any], list[Any]]]:
    """Per method: its inlined schema and schema-valid drawn params (memoised)."""
    memo = ctx.runtime.memo
    if "examples" not in memo:
        surface = await ctx.surface()
        count = ctx.config.fuzz_examples
        backend = load_backend()

        def draw() -> dict[str, tuple[dict[str, Any], list[Any]]]:
            table = {}
            for method, entry in fuzzable_methods(surface):
                schema = resolved_schema(entry["file"], entry["params"])
                values = generate(schema, count, seed_label=method)
                table[method] = (
                    schema,
                    [v for v in values if not backend.validate_params(method, v)],
                )
            return table

        memo["examples"] = await anyio.to_thread.run_sync(draw)
    examples: dict[str, tuple[dict[str, Any], list[Any]]] = memo["examples"]
    return examples


def _ground(params: Any, ctx: CheckContext, session_id: str, rng: random.Random) -> Any:
    """Point half of the draws at a real session and the real work dir, so the agent's
    code paths past the session lookup get exercised too."""
    if isinstance(params, dict) and rng.random() < 0.5:
        params = dict(params)
        if "sessionId" in params:
            params["sessionId"] = session_id
        if "cwd" in params:
            params["cwd"] = str(ctx.work)
    return params


def _problem(method: str, response: Any, backend: Any) -> str | None:
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


async def _send(run: AgentRun, method: str, params: Any, *, deliberate: bool) -> Any:
    return await run.live.request(method, params, deliberate=deliberate)


@check("robustness.fuzz-valid-params", scenario=FUZZ)
async def drawn_params_get_valid_answers(ctx: CheckContext) -> Outcome:
    examples = await _examples(ctx)
    if not examples or ctx.config.fuzz_examples == 0:
        return not_applicable("no fuzzable methods (or --fuzz-examples 0)")
    backend = load_backend()
    run = await ctx.agent()
    session_id = await ctx.new_session(run)
    rng = random.Random(7)
    sent, problems = 0, []
    for method, (_schema, values) in examples.items():
        for params in values:
            grounded = _ground(params, ctx, session_id, rng)
            try:
                response = await _send(run, method, grounded, deliberate=False)
            except AgentExited:
                return failed(
                    f"the agent died after {method} with params {grounded!r:.300}", sent=sent
                )
            except AgentTimeout:
                return failed(f"no answer to {method} with params {grounded!r:.300}", sent=sent)
            sent += 1
            if (why := _problem(method, response, backend)) is not None:
                problems.append((response.frame.seq, f"{method}: {why}"))
    if problems:
        return failed(
            f"{len(problems)} of {sent} answers were not a valid result or error: {problems[0][1]}",
            frames=[seq for seq, _ in problems[:10]],
            problems=[why for _, why in problems[:20]],
        )
    return passed(f"{sent} drawn requests over {len(examples)} methods answered validly")


@check("robustness.fuzz-invalid-params", scenario=FUZZ)
async def mutated_params_get_errors(ctx: CheckContext) -> Outcome:
    examples = await _examples(ctx)
    if not examples or ctx.config.fuzz_examples == 0:
        return not_applicable("no fuzzable methods (or --fuzz-examples 0)")
    run = await ctx.agent()
    sent, accepted = 0, []
    for method, (schema, values) in examples.items():
        for params in values[:2]:
            for label, variant in mutations(schema, params):
                try:
                    response = await _send(run, method, variant, deliberate=True)
                except AgentExited:
                    return failed(f"the agent died after {method} with {label}", sent=sent)
                except AgentTimeout:
                    return failed(f"no answer to {method} with {label}", sent=sent)
                sent += 1
                if not response.is_error:
                    accepted.append((response.frame.seq, f"{method} accepted params with {label}"))
    if accepted:
        return failed(
            f"{len(accepted)} of {sent} invalid requests succeeded: {accepted[0][1]}",
            frames=[seq for seq, _ in accepted[:10]],
            accepted=[why for _, why in accepted[:20]],
        )
    return passed(f"{sent} invalid requests all rejected")


drawn_params_get_valid_answers.budget_factor = 40  # type: ignore[attr-defined]
mutated_params_get_errors.budget_factor = 40  # type: ignore[attr-defined]
