"""The rules the proxy judges live traffic by, as the proxy reports them.

Every rule comes from the one catalogue (:mod:`acp_conformance.catalogue`): the agent's
rules keep the ids, statements and citations of ``acp-conformance run``, the client's those
of ``acp-conformance client``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalogue import judged_by
from ..requirements import effective


@dataclass(frozen=True)
class LiveRule:
    id: str
    tier: str
    statement: str
    reference: str
    #: Whose message breaks it: "agent" or "client".
    side: str


def live_rules(profile: str) -> dict[str, LiveRule]:
    """Every rule the proxy applies, with tiers as judged under ``profile``."""
    rules: dict[str, LiveRule] = {}
    for rule in judged_by("proxy"):
        req = effective(rule, profile)
        side = "client" if req.area == "client" else "agent"
        rules[req.id] = LiveRule(req.id, req.tier.value, req.statement, req.reference, side)
    return rules
