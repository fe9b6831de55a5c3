"""The rule catalogue: every rule ``run``, ``client`` and ``proxy`` judge, one id per rule,
with the check and judge modules of ``run`` in the order a run takes them.

A rule (:class:`.requirements.Requirement`) is its id, tier, statement, citation, the official
kit's ids it covers, its capability gate, its v2 draft range, whether it is a house rule (the
``iac-code`` profile), ``judged_by``: the commands that judge it, and ``transports``: those it
applies to (from :mod:`.remote_scope`). Every rule is data (``rules/<area>.toml``, read by
:mod:`.requirements`); the client's are in ``rules/client.toml``; the proxy judges a
subset of both (:data:`PROXY_AGENT_RULES` and the client rules marked ``proxy``), under the
same ids, statements and tiers.

The registry (:mod:`.requirements`) knows no check: each check module imports it and
binds its checks to rule ids on import. This module imports every one of them by name and declares
:data:`RUN_ORDER`, so the set of checks is explicit and the import-cycle test sees every
edge. :data:`REQUIREMENTS` and :data:`CHECKS` follow that order (then the order within each
module), whichever module some caller happened to import first.

The checks of one scenario run in that order. Checks that leave state behind in the
scenario's shared agent come last in it (``cancel.during-tool-call`` in the cancel scenario,
the restart and allow-always checks at the end of ``turns``), so their modules come late.
The ``version.v2-*`` checks all run in the protocol-v2 scenario, on the v2 agents of
:mod:`.scenarios.v2_agent`: the shared v2 agent's negotiation checks first, then the kit's
turns (cancel, close, the user message echo), batches and the other checks outside a turn,
the check that judges every update sent (keyed updates), then the resumes of the echo turn,
and the checks that start agents of their own (auth, elicitation) last. The resumes stop the
shared v2 turn agent (a session is resumed after a restart), so every turn check comes
before them: after them a new turn agent would load its model SDK again (~2 CPU-s). An area
can appear twice (``v2_turns`` then ``v2_cancel``, ``v2_resume`` then ``v2_resume_kit``)
because each module's checks run together and this order is kept.
"""

from __future__ import annotations

import fnmatch
from dataclasses import replace
from types import ModuleType

from .checks import (
    cancel,
    extensibility,
    gating,
    http,
    http_status,
    initialize,
    jsonrpc,
    modes,
    prompt,
    robustness,
    session_paging,
    session_unknown,
    sessions,
    trace_context,
    turns,
    v2_auth,
    v2_basics,
    v2_batches,
    v2_cancel,
    v2_client,
    v2_config,
    v2_elicitation,
    v2_keyed_updates,
    v2_negotiation,
    v2_prompts,
    v2_resume,
    v2_resume_kit,
    v2_sessions,
    v2_turns,
    websocket,
)
from .client.requirements import CLIENT_REQUIREMENTS
from .judges import (
    client_methods,
    consistency,
    foreground_state,
    output,
    schemas,
    session_ids,
    shutdown,
    tool_calls,
    trace_continuation,
    wire,
)
from .remote_scope import transports
from .requirements import (
    DEFAULT_RULE_PROFILE,
    Check,
    Requirement,
    effective,
    registered_so_far,
)
from .scenarios import catalog  # noqa: F401  (every scenario, in their order)

#: The modules that register rules, in the run's order. ``scenarios.catalog`` is not among
#: them: it registers no rule, only the scenarios (in its own order).
RUN_ORDER: tuple[ModuleType, ...] = (
    # run-wide judges of every frame and every result
    session_ids,
    wire,
    schemas,
    client_methods,
    shutdown,
    consistency,
    output,
    tool_calls,
    foreground_state,
    # the v1 scenarios' checks
    jsonrpc,
    extensibility,
    initialize,
    modes,
    sessions,
    session_unknown,
    session_paging,
    prompt,
    turns,
    cancel,
    gating,
    robustness,
    http,
    http_status,
    websocket,
    trace_context,
    trace_continuation,
    # the protocol-v2 scenario's checks; they share its agents, so this order is theirs
    v2_negotiation,
    v2_turns,
    v2_batches,
    v2_basics,
    v2_cancel,
    v2_client,
    v2_prompts,
    v2_sessions,
    v2_config,
    v2_keyed_updates,
    v2_resume,
    v2_resume_kit,
    v2_auth,
    v2_elicitation,
)


#: The agent's rules that ``acp-conformance proxy`` also judges, live, frame by frame.
PROXY_AGENT_RULES = (
    "transport.stdout-only-json",
    "transport.newline-terminated",
    "transport.utf8",
    "transport.output-bounded",
    "jsonrpc.envelope-valid",
    "jsonrpc.id-echo",
    "jsonrpc.one-response-per-request",
    "schema.agent-messages-valid",
    "prompt.updates-after-session-handed-out",
    "prompt.updates-name-known-session",
    "prompt.updates-before-response",
)


def _in_run_order() -> tuple[dict[str, Requirement], list[Check]]:
    requirements, defined_in, checks = registered_so_far()
    position = {module.__name__: index for index, module in enumerate(RUN_ORDER)}
    registering = set(defined_in.values()) | {c.module for c in checks}
    unlisted = sorted(registering - position.keys())
    if unlisted:
        raise RuntimeError(f"rule modules missing from catalogue.RUN_ORDER: {unlisted}")
    unchecked = sorted(set(requirements) - defined_in.keys())
    if unchecked:
        raise RuntimeError(f"rules with no check bound (@check): {unchecked}")
    ordered = sorted(requirements, key=lambda rid: position[defined_in[rid]])
    return (
        {rid: _with_commands(requirements[rid]) for rid in ordered},
        sorted(checks, key=lambda c: position[c.module]),
    )


def _with_commands(req: Requirement) -> Requirement:
    """``req`` with the commands that judge it and the transports it applies to."""
    judged = ("run", "proxy") if req.id in PROXY_AGENT_RULES else ("run",)
    return replace(req, judged_by=judged, transports=transports(req))


#: Every requirement ``run`` judges by id, and every check and judge, in the run's order.
REQUIREMENTS, CHECKS = _in_run_order()

#: Every rule of the catalogue by id: the agent's, then the client's.
RULES: dict[str, Requirement] = {
    **REQUIREMENTS,
    **{rule.id: rule for rule in CLIENT_REQUIREMENTS},
}


def judged_by(command: str) -> list[Requirement]:
    """The rules ``command`` (``run``, ``client`` or ``proxy``) judges, in catalogue order."""
    return [rule for rule in RULES.values() if command in rule.judged_by]


def select(patterns: list[str], profile: str = DEFAULT_RULE_PROFILE) -> list[Requirement]:
    """Requirements whose id or area matches any pattern (glob, or substring); all if none.
    Each is returned as judged under the rule ``profile``."""
    return [effective(req, profile) for req in _matching(patterns)]


def _matching(patterns: list[str]) -> list[Requirement]:
    if not patterns:
        return list(REQUIREMENTS.values())
    chosen = []
    for req in REQUIREMENTS.values():
        for pattern in patterns:
            if (
                fnmatch.fnmatchcase(req.id, pattern)
                or fnmatch.fnmatchcase(req.area, pattern)
                or (not any(ch in pattern for ch in "*?[") and pattern in req.id)
            ):
                chosen.append(req)
                break
    return chosen
