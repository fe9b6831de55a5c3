"""The requirements registry: every rule the checker judges, and the checks bound to it.

A requirement has a stable id ``area.name``, a tier, a one-line statement and a citation
(the ACP documentation or JSON-RPC 2.0 section it comes from, see :mod:`.citations`).
Requirements that are stricter than ACP — iac-code's house rules — are marked ``house``;
the rule profile of a run (:data:`RULE_PROFILES`) decides whether they block.

A requirement is defined where it is judged, by one decorator on its check::

    @requirement(
        "jsonrpc.id-echo",
        Tier.MUST,
        "A response carries its request's id unchanged, for integer and string ids.",
        jsonrpc("§5 Response object", "response_object", "MUST be the same as ..."),
        scenario=ENVELOPE,
    )
    async def integer_and_string_ids_are_echoed(ctx: CheckContext) -> Outcome: ...

An async check drives the agent inside its ``scenario`` (:mod:`.scenarios.catalog`); a
synchronous one with ``scenario=RUN_WIDE`` is a judge over everything recorded in the whole
run (:mod:`.judges`). A second check of a requirement defined elsewhere is bound with
:func:`check`. The modules of :mod:`.checks` and :mod:`.judges` register on import. This
module knows none of them (they import it): :mod:`.catalogue` imports them all, in the run's
declared order, and holds the complete registry. The meta-tests in ``tests/checker/checks``
enforce that every requirement has a check and every check names a requirement.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, TypeVar

from .kit import COVERAGE as KIT_COVERAGE
from .v2_drafts import ALL_DRAFTS, DraftRange

#: Every transport a rule can be judged over (``--url`` runs are ``http``, ``--url --ws`` ``ws``).
TRANSPORTS = ("stdio", "http", "ws")

#: Requirements judging protocol version 2 (each carries the v2 drafts it belongs to).
V2_PREFIX = "version.v2-"


class Tier(StrEnum):
    MUST = "MUST"
    #: A MUST that applies only when the agent advertises the capability named by ``gate``.
    CAPABILITY = "CAPABILITY"
    SHOULD = "SHOULD"
    INFO = "INFO"


@dataclass(frozen=True)
class Requirement:
    id: str
    tier: Tier
    statement: str
    reference: str
    #: Dotted path into the agent's advertised surface (``agentCapabilities...``,
    #: ``authMethods``, ``session.modes``, ``session.configOptions``); when it is not
    #: advertised the requirement is not applicable.
    gate: str | None = None
    #: Needs a prompt turn driven by the scripted LLM (not applicable with ``--llm none``).
    llm: bool = False
    #: An iac-code house rule: stricter than ACP itself. Under ``--profile acp`` a blocking
    #: house rule is reported as SHOULD; under ``--profile iac-code`` it keeps its tier.
    house: bool = False
    #: The v2 drafts the rule belongs to (every v2 requirement has one; None for v1 rules):
    #: under ``--v2-draft`` outside the range it is not applicable.
    drafts: DraftRange | None = None
    #: The commands that judge the rule: ``run`` (the agent, scenario by scenario),
    #: ``client`` (a client against the agent double), ``proxy`` (live traffic either way).
    judged_by: tuple[str, ...] = ("run",)
    #: The transports the rule can be judged over: ``stdio``, ``http`` (Streamable HTTP),
    #: ``ws`` (WebSocket). Filled for ``run``'s rules by the catalogue from
    #: :mod:`.remote_scope`, which decides applicability per transport.
    transports: tuple[str, ...] = TRANSPORTS

    @property
    def area(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def blocking(self) -> bool:
        """Whether a failure makes the agent non-conformant."""
        return self.tier in (Tier.MUST, Tier.CAPABILITY)

    @property
    def tck(self) -> tuple[str, ...]:
        """The official ACP test kit's ids this requirement judges (``v1:ACP-INIT-003``)."""
        return KIT_COVERAGE.get(self.id, ())

    def to_json(self) -> dict[str, Any]:
        """The requirement as ``acp-conformance list --json`` prints it."""
        return {
            "id": self.id,
            "area": self.area,
            "tier": self.tier.value,
            "statement": self.statement,
            "citation": self.reference,
            "tck": list(self.tck),
            "gate": self.gate,
            "needsLlm": self.llm,
            "house": self.house,
            "v2Drafts": self.drafts.label if self.drafts is not None else None,
            "judgedBy": list(self.judged_by),
            "transports": list(self.transports),
        }


#: Every requirement by id, in the order the check modules registered them, and the module
#: that defined each. Readers take the complete, ordered registry from :mod:`.catalogue`.
_REQUIREMENTS: dict[str, Requirement] = {}
_DEFINED_IN: dict[str, str] = {}


def _define(
    module: str,
    id: str,
    tier: Tier,
    statement: str,
    reference: str,
    *,
    gate: str | None = None,
    llm: bool = False,
    house: bool = False,
    drafts: DraftRange | None = None,
) -> Requirement:
    if id in _REQUIREMENTS:
        raise ValueError(f"duplicate requirement {id}")
    if (tier is Tier.CAPABILITY) != (gate is not None) and tier is not Tier.SHOULD:
        raise ValueError(f"{id}: CAPABILITY requirements (only) need a gate")
    is_v2 = id.startswith(V2_PREFIX)
    if drafts is not None and not is_v2:
        raise ValueError(f"{id}: only v2 requirements ({V2_PREFIX}*) have draft ranges")
    if is_v2 and drafts is None:
        drafts = ALL_DRAFTS
    req = Requirement(id, tier, statement, reference, gate, llm, house, drafts)
    _REQUIREMENTS[id] = req
    _DEFINED_IN[id] = module
    return req


#: Rule profiles (``--profile``): which requirements can make an agent NOT CONFORMANT.
RULE_PROFILES: dict[str, str] = {
    "acp": "what ACP and JSON-RPC 2.0 require; iac-code house rules report as SHOULD (default)",
    "iac-code": "ACP plus iac-code's stricter house rules, which then block like MUST",
}
DEFAULT_RULE_PROFILE = "acp"


def effective(req: Requirement, profile: str) -> Requirement:
    """``req`` as judged under a rule profile: blocking house rules become SHOULD under acp."""
    if profile not in RULE_PROFILES:
        raise KeyError(f"unknown rule profile {profile!r} (known: {', '.join(RULE_PROFILES)})")
    if profile == "acp" and req.house and req.blocking:
        return replace(req, tier=Tier.SHOULD)
    return req


# -- checks ---------------------------------------------------------------------------------

#: ``scenario=RUN_WIDE``: a synchronous judge over everything recorded in the run (it gets a
#: ``RunRecord`` once every scenario has finished) instead of a check inside one scenario.
RUN_WIDE: None = None

#: How long a check may take, in multiples of the run's ``--timeout``.
DEFAULT_BUDGET = 10.0

CheckFn = TypeVar("CheckFn", bound=Callable[..., Any])


@dataclass(frozen=True)
class Check:
    """A function bound to one requirement. ``scenario`` is None for run-wide judges."""

    requirement: str
    name: str
    func: Any
    scenario: str | None
    #: The check's time budget in multiples of ``--timeout``.
    budget: float = DEFAULT_BUDGET

    @property
    def module(self) -> str:
        """The module the check is defined in (its place in the declared run order)."""
        return str(self.func.__module__)


_CHECKS: list[Check] = []


def registered_so_far() -> tuple[dict[str, Requirement], dict[str, str], list[Check]]:
    """What the modules imported so far registered: requirements by id, the module defining
    each, and the checks. Only :mod:`.catalogue` reads this; it imports every check module
    first and puts the registry in the declared run order."""
    return _REQUIREMENTS, _DEFINED_IN, _CHECKS


def requirement(
    id: str,
    tier: Tier,
    statement: str,
    citation: str,
    *,
    scenario: str | None,
    gate: str | None = None,
    llm: bool = False,
    house: bool = False,
    budget: float = DEFAULT_BUDGET,
    drafts: DraftRange | None = None,
) -> Callable[[CheckFn], CheckFn]:
    """Define a requirement and bind the decorated function to it as its check.

    ``citation`` is the public text the rule comes from (:mod:`.citations`); ``gate`` a dotted
    path into the agent's advertised surface (CAPABILITY requirements); ``llm`` that it needs
    a scripted model turn; ``house`` that it is an iac-code house rule. ``scenario`` is the
    scenario the async check runs in, or :data:`RUN_WIDE` for a synchronous judge of the
    whole run; ``budget`` bounds the check in multiples of ``--timeout``. ``drafts`` is the
    range of v2 drafts a ``version.v2-*`` rule belongs to (default: every draft).
    """

    def define_and_bind(func: CheckFn) -> CheckFn:
        _define(
            func.__module__,
            id,
            tier,
            statement,
            citation,
            gate=gate,
            llm=llm,
            house=house,
            drafts=drafts,
        )
        return check(id, scenario=scenario, budget=budget)(func)

    return define_and_bind


def check(
    requirement: str, *, scenario: str | None, budget: float = DEFAULT_BUDGET
) -> Callable[[CheckFn], CheckFn]:
    """Bind one more check to a requirement defined elsewhere (by :func:`requirement`)."""

    def register(func: CheckFn) -> CheckFn:
        if inspect.iscoroutinefunction(func) != (scenario is not None):
            kind = "an async check in a scenario" if scenario else "a synchronous run-wide judge"
            raise TypeError(f"{func.__name__} ({requirement}) must be {kind}")
        _CHECKS.append(Check(requirement, func.__name__, func, scenario, budget))
        return func

    return register
