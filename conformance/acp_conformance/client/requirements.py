"""The client-side rules: what ``acp-conformance client`` judges against its agent double,
and what ``acp-conformance proxy`` judges in the client's live traffic, under the same ids.

They are data, in ``rules/client.toml``, with the same fields and tier rules as the agent's:
MUST only where the cited text says MUST/REQUIRED (or the published schema requires the
shape); CAPABILITY for a MUST that applies only when the client advertises the capability in
``gate``; the rest SHOULD. Ids are ``client.<area>.<name>``; ``judged_by`` says which
commands judge each rule. The complete catalogue, agent rules included, is
:mod:`acp_conformance.catalogue`.
"""

from __future__ import annotations

from ..requirements import Requirement, load_rules

#: Every client rule, in the data file's order.
CLIENT_REQUIREMENTS: tuple[Requirement, ...] = tuple(
    rule for rule in load_rules().values() if rule.area == "client"
)
