"""The rules the proxy judges live traffic by, with tiers and citations.

Agent-side rules are the checker's own requirements (same ids, statements and citations as
``acp-conformance run``); a few client-side rules have no agent requirement to borrow, so
they are described here, citing the same sources.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalogue import REQUIREMENTS
from ..citations import STDIO, acp, jsonrpc, schema_requires
from ..requirements import effective


@dataclass(frozen=True)
class LiveRule:
    id: str
    tier: str
    statement: str
    reference: str
    #: Whose message breaks it: "agent" or "client".
    side: str


#: Agent rules borrowed from the requirements registry.
AGENT_RULES = (
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

_CLIENT_RULES = (
    LiveRule(
        "client.frames-json",
        "MUST",
        "Every line the client writes to the agent's stdin is a JSON-RPC message.",
        STDIO,
        "client",
    ),
    LiveRule(
        "client.envelope-valid",
        "MUST",
        'Every client message has jsonrpc "2.0" and is a well-formed request, notification '
        "or response.",
        jsonrpc("§4 Request object", "request_object", 'MUST be exactly "2.0"'),
        "client",
    ),
    LiveRule(
        "client.messages-valid",
        "MUST",
        "Every client message validates against its method's schema (responses: the agent "
        "request's method).",
        schema_requires("the params and result shapes of every method"),
        "client",
    ),
    LiveRule(
        "client.id-echo",
        "MUST",
        "The client answers an agent request with the request's id unchanged.",
        jsonrpc(
            "§5 Response object",
            "response_object",
            "MUST be the same as the value of the id member in the Request Object",
        ),
        "client",
    ),
    LiveRule(
        "client.one-response-per-request",
        "MUST",
        "The client answers every agent request once and never answers ids it was not sent.",
        jsonrpc("§5 Response object", "response_object", "the Server MUST reply with a Response"),
        "client",
    ),
    LiveRule(
        "client.initialize-first",
        "MUST",
        "The client sends initialize before any other request.",
        acp(
            "initialization",
            "Initialization",
            "Clients MUST initialize the connection by calling the initialize method",
        ),
        "client",
    ),
)


def live_rules(profile: str) -> dict[str, LiveRule]:
    """Every rule the proxy applies, with agent tiers as judged under ``profile``."""
    rules: dict[str, LiveRule] = {}
    for rule_id in AGENT_RULES:
        req = effective(REQUIREMENTS[rule_id], profile)
        rules[rule_id] = LiveRule(req.id, req.tier.value, req.statement, req.reference, "agent")
    rules.update((rule.id, rule) for rule in _CLIENT_RULES)
    return rules
