"""The rule catalogue's data and the checks bound to it.

A rule (:class:`Requirement`) has a stable id ``area.name``, a tier, a one-line statement
and a citation (the ACP documentation or JSON-RPC 2.0 section it comes from, rendered as
text). Rules stricter than ACP — iac-code's house rules — are marked ``house``; the rule
profile of a run (:data:`RULE_PROFILES`) decides whether they block.

Rules are data: every rule is an entry of ``rules/<area>.toml`` in this package, read once
at import. A check only binds to a rule id::

    @check("jsonrpc.id-echo", scenario=ENVELOPE)
    async def integer_and_string_ids_are_echoed(ctx: CheckContext) -> Outcome: ...

An async check drives the agent inside its ``scenario`` (:mod:`.scenarios.catalog`); a
synchronous one with ``scenario=RUN_WIDE`` is a judge over everything recorded in the whole
run (:mod:`.judges`). Binding a check to an id the data does not define fails at import;
:mod:`.catalogue` imports every check module in the run's declared order and fails when a
rule ``run`` judges has no check. A rule is listed where its first check is (its first
check inside a scenario, when it also has run-wide judges). This module knows no check
module (they import it).

An entry of a rules file: ``id``, ``tier`` (MUST, CAPABILITY, SHOULD, INFO), ``statement``,
``citation``, and when they apply ``gate`` (dotted path into the advertised surface; every
CAPABILITY rule has one), ``llm = true`` (needs a scripted model turn), ``house = true``,
``versions`` (the ACP protocol versions the rule is judged on: ``["v1"]``, ``["v2"]`` or
both), ``drafts`` (a v2 rule's v2 draft range, ``alpha.3..alpha.8`` or one draft; default
for a v2-only rule: every draft) and ``judged_by`` (the commands judging a rule that ``run``
does not judge: ``client``, ``proxy``; such a rule is judged over stdio).

``versions`` says which negotiated versions a rule's checks and judges look at: a check in
the protocol-v2 scenario drives connections that negotiated 2, the other scenarios' checks
and the client command's agent double speak 1, and a run-wide judge (or the proxy) sees
every connection, each at its own version. A file gives the default for its rules with a
top-level ``versions = [...]``; a rule overrides it with its own. Every rule has it after
loading; an unknown version, or a draft range on a rule without v2, is refused by name.
"""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache
from importlib.resources import files
from typing import Any, TypeVar

from .kit import COVERAGE as KIT_COVERAGE
from .v2_drafts import ALL_DRAFTS, DraftRange

#: Every transport a rule can be judged over (``--url`` runs are ``http``, ``--url --ws`` ``ws``).
TRANSPORTS = ("stdio", "http", "ws")

#: The ACP protocol versions a rule can be judged on (``versions``), oldest first.
PROTOCOL_VERSIONS = ("v1", "v2")


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
    #: The v2 drafts the rule belongs to (every v2-only rule has one; None for the others):
    #: under ``--v2-draft`` outside the range it is not applicable.
    drafts: DraftRange | None = None
    #: The protocol versions (:data:`PROTOCOL_VERSIONS`) whose connections the rule is
    #: judged on, from the rules data (the file's default or the rule's own).
    versions: tuple[str, ...] = PROTOCOL_VERSIONS
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
    def versions_text(self) -> str:
        """``v1``, ``v2`` or ``v1+v2``: the versions in one word, for listings."""
        return "+".join(self.versions)

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
            "versions": list(self.versions),
            "v2Drafts": self.drafts.label if self.drafts is not None else None,
            "judgedBy": list(self.judged_by),
            "transports": list(self.transports),
        }


#: The package folder holding the rules, one TOML file per area.
RULES_DIR = "rules"

_FIELDS = frozenset(
    {
        "id",
        "tier",
        "statement",
        "citation",
        "gate",
        "llm",
        "house",
        "versions",
        "drafts",
        "judged_by",
    }
)
#: What a rules file holds at its top level: its rules and the default ``versions``.
_FILE_KEYS = frozenset({"rule", "versions"})


def _draft_range(label: str) -> DraftRange:
    first, _, last = label.partition("..")
    return DraftRange(first, last or first)


def _versions(given: object, where: str) -> tuple[str, ...]:
    """``given`` (a rule's ``versions``) in canonical order; ValueError says what is wrong."""
    if given is None:
        raise ValueError(
            f"{where}: no versions (set `versions = [...]` on the rule or at the top of "
            f"its file; known: {', '.join(PROTOCOL_VERSIONS)})"
        )
    if not isinstance(given, list) or not given or not all(isinstance(v, str) for v in given):
        raise ValueError(f"{where}: versions must be a non-empty list of strings, not {given!r}")
    unknown = sorted(set(given) - set(PROTOCOL_VERSIONS))
    if unknown:
        raise ValueError(
            f"{where}: unknown protocol versions {unknown} (known: {', '.join(PROTOCOL_VERSIONS)})"
        )
    if len(set(given)) != len(given):
        raise ValueError(f"{where}: versions {given} names a version twice")
    return tuple(v for v in PROTOCOL_VERSIONS if v in given)


def rule_from_data(
    entry: dict[str, Any], source: str, default_versions: list[str] | None = None
) -> Requirement:
    """One entry of a rules file as a :class:`Requirement`; ValueError names what is wrong.
    ``default_versions`` is the file's ``versions``, for an entry without its own."""
    id = entry.get("id")
    unknown = sorted(set(entry) - _FIELDS)
    if unknown or not isinstance(id, str):
        raise ValueError(f"{source}: rule {id!r}: unknown fields {unknown} or no id")
    tier = Tier(entry["tier"])
    gate = entry.get("gate")
    if (tier is Tier.CAPABILITY) != (gate is not None) and tier is not Tier.SHOULD:
        raise ValueError(f"{source}: {id}: CAPABILITY requirements (only) need a gate")
    versions = _versions(entry.get("versions", default_versions), f"{source}: {id}")
    drafts = entry.get("drafts")
    if drafts is not None and "v2" not in versions:
        raise ValueError(
            f"{source}: {id}: a v2 draft range (drafts = {drafts!r}) needs v2 in its versions "
            f"{list(versions)}"
        )
    v2_only = versions == ("v2",)
    judged_by = tuple(entry.get("judged_by", ("run",)))
    return Requirement(
        id,
        tier,
        entry["statement"],
        entry["citation"],
        gate=gate,
        llm=entry.get("llm", False),
        house=entry.get("house", False),
        drafts=_draft_range(drafts) if drafts else (ALL_DRAFTS if v2_only else None),
        versions=versions,
        judged_by=judged_by,
        # The client's rules are judged against the agent double or in a proxy, over stdio.
        transports=TRANSPORTS if "run" in judged_by else ("stdio",),
    )


def rules_of_file(text: str, source: str) -> list[Requirement]:
    """The rules of one rules file (its top-level ``versions`` is their default)."""
    data = tomllib.loads(text)
    if unknown := sorted(set(data) - _FILE_KEYS):
        raise ValueError(f"{source}: unknown top-level keys {unknown}")
    return [rule_from_data(entry, source, data.get("versions")) for entry in data.get("rule", [])]


@cache
def load_rules() -> dict[str, Requirement]:
    """Every rule of the data files by id (files by name, entries in file order)."""
    rules: dict[str, Requirement] = {}
    folder = files(__package__) / RULES_DIR
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if not path.name.endswith(".toml"):
            continue
        for rule in rules_of_file(path.read_text(encoding="utf-8"), f"{RULES_DIR}/{path.name}"):
            if rule.id in rules:
                raise ValueError(f"duplicate requirement {rule.id} ({RULES_DIR}/{path.name})")
            rules[rule.id] = rule
    return rules


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
    """The rules ``run`` judges, the module each is listed in, and the checks bound so far.

    Only :mod:`.catalogue` reads this, once it has imported every check module, and puts
    the result in the declared run order. A rule is listed in the module of its first check
    in a scenario (of its first judge when it has no scenario check); the rules come in the
    order their listing checks were bound, and a rule with no check yet comes last with no
    module."""
    home: dict[str, tuple[int, Check]] = {}
    for index, bound in enumerate(_CHECKS):
        first = home.get(bound.requirement)
        if first is None or (first[1].scenario is None and bound.scenario is not None):
            home[bound.requirement] = (index, bound)
    ranked = sorted(home, key=lambda rid: home[rid][0])
    run_rules = {rid: rule for rid, rule in load_rules().items() if "run" in rule.judged_by}
    ordered = {rid: run_rules[rid] for rid in ranked}
    ordered.update(run_rules)
    return ordered, {rid: home[rid][1].module for rid in ranked}, _CHECKS


def check(
    requirement: str,
    *,
    scenario: str | None,
    budget: float = DEFAULT_BUDGET,
    like: Callable[..., Any] | None = None,
) -> Callable[[CheckFn], CheckFn]:
    """Bind the decorated function as a check of ``requirement``, a rule ``run`` judges.

    ``scenario`` is the scenario the async check runs in, or :data:`RUN_WIDE` for a
    synchronous judge of the whole run; ``budget`` bounds the check in multiples of
    ``--timeout``. ``like``: for a wrapper made around a check body (a family row, a check
    given an observation), the body whose name and module the check takes (a check's module
    is its place in the run order)."""
    rule = load_rules().get(requirement)
    if rule is None:
        raise KeyError(f"a check names {requirement!r}, which no rule in {RULES_DIR}/ defines")
    if "run" not in rule.judged_by:
        raise KeyError(f"a check names {requirement!r}, a rule `run` does not judge")

    def register(func: CheckFn) -> CheckFn:
        if like is not None:
            func.__name__ = func.__qualname__ = like.__name__
            func.__module__ = like.__module__
        if inspect.iscoroutinefunction(func) != (scenario is not None):
            kind = "an async check in a scenario" if scenario else "a synchronous run-wide judge"
            raise TypeError(f"{func.__name__} ({requirement}) must be {kind}")
        _CHECKS.append(Check(requirement, func.__name__, func, scenario, budget))
        return func

    return register
