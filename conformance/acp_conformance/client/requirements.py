"""The client-side rules: what ``acp-conformance client`` judges against its agent double,
and what ``acp-conformance proxy`` judges in the client's live traffic, under the same ids.

Same ``Requirement`` type and tier rules as the agent checks: MUST only where the cited text
says MUST/REQUIRED (or the published schema requires the shape); CAPABILITY for a MUST that
applies only when the client advertises the capability in ``gate``; the rest SHOULD. Ids are
``client.<area>.<name>``; ``judged_by`` says which commands judge each rule. The complete
catalogue, agent rules included, is :mod:`acp_conformance.catalogue`.
"""

from __future__ import annotations

from ..citations import RESPONSE, STDIO, acp, jsonrpc, schema_requires
from ..requirements import Requirement, Tier

#: Judged by both commands: against the agent double, and in live traffic.
_BOTH = ("client", "proxy")


def _rule(
    id: str,
    tier: Tier,
    statement: str,
    citation: str,
    *,
    gate: str | None = None,
    judged_by: tuple[str, ...] = ("client",),
) -> Requirement:
    # The agent double and the proxy both speak to the client over stdio.
    return Requirement(
        id, tier, statement, citation, gate=gate, judged_by=judged_by, transports=("stdio",)
    )


CLIENT_REQUIREMENTS: tuple[Requirement, ...] = (
    _rule(
        "client.init.first",
        Tier.MUST,
        "The client sends initialize before any other request.",
        acp(
            "initialization",
            "Initialization",
            "Clients MUST initialize the connection by calling the initialize method",
        ),
        judged_by=_BOTH,
    ),
    _rule(
        "client.init.shape",
        Tier.MUST,
        "The initialize request matches InitializeRequest (protocolVersion, clientCapabilities).",
        schema_requires("InitializeRequest"),
    ),
    _rule(
        "client.wire.json",
        Tier.MUST,
        "Every line the client writes to the agent's stdin is a JSON-RPC message.",
        STDIO + ": \"The client MUST NOT write anything to the agent's stdin that is not a "
        'valid ACP message"',
        judged_by=_BOTH,
    ),
    _rule(
        "client.jsonrpc.envelope",
        Tier.MUST,
        'Every client message has jsonrpc "2.0" and is a well-formed request, notification '
        "or response.",
        jsonrpc("§4 Request object", "request_object", 'MUST be exactly "2.0"'),
        judged_by=("proxy",),
    ),
    _rule(
        "client.schema.messages",
        Tier.MUST,
        "Every request, notification and answer the client sends matches its published schema.",
        schema_requires("the params of each client request and the result of each answer"),
        judged_by=_BOTH,
    ),
    _rule(
        "client.jsonrpc.id-echo",
        Tier.MUST,
        "Answers to agent requests echo the request's id exactly (integer and string ids).",
        jsonrpc(
            "§5 Response object",
            "response_object",
            "It MUST be the same as the value of the id member in the Request Object",
        ),
        judged_by=_BOTH,
    ),
    _rule(
        "client.jsonrpc.answers",
        Tier.MUST,
        "Every agent→client request gets one response (result or error), and no response "
        "answers an id the agent never sent.",
        RESPONSE + ': "When a rpc call is made, the Server MUST reply with a Response"',
        judged_by=_BOTH,
    ),
    _rule(
        "client.order.session",
        Tier.SHOULD,
        "session/prompt names a session the agent created or loaded on this connection.",
        acp("prompt-turn", "The Prompt Turn"),
    ),
    _rule(
        "client.fs.read",
        Tier.CAPABILITY,
        "A client advertising fs.readTextFile answers fs/read_text_file with the file's text.",
        acp("file-system", "Reading Files") + "; " + schema_requires("ReadTextFileResponse"),
        gate="clientCapabilities.fs.readTextFile",
    ),
    _rule(
        "client.fs.write",
        Tier.CAPABILITY,
        "A client advertising fs.writeTextFile answers fs/write_text_file and writes the file.",
        acp("file-system", "Writing Files") + "; " + schema_requires("WriteTextFileResponse"),
        gate="clientCapabilities.fs.writeTextFile",
    ),
    _rule(
        "client.terminal.create",
        Tier.CAPABILITY,
        "A client advertising terminal answers terminal/create with a terminalId.",
        acp("terminals", "Executing Commands") + "; " + schema_requires("CreateTerminalResponse"),
        gate="clientCapabilities.terminal",
    ),
    _rule(
        "client.permission.option",
        Tier.SHOULD,
        "A permission answer selects one of the offered optionIds (or is cancelled).",
        acp("tool-calls", "Requesting Permission"),
    ),
    _rule(
        "client.permission.cancelled",
        Tier.MUST,
        "After sending session/cancel, the client answers pending permission requests with "
        "the cancelled outcome.",
        acp(
            "prompt-turn",
            "Cancellation",
            "The Client MUST respond to all pending session/request_permission requests with "
            "the cancelled outcome",
        ),
    ),
    _rule(
        "client.tolerance.unknown-update",
        Tier.SHOULD,
        "An unknown session/update kind and unknown _meta fields do not stop the client: "
        "it keeps answering and finishes the turn.",
        acp("extensibility", "The _meta Field"),
    ),
    _rule(
        "client.tolerance.interleaved",
        Tier.SHOULD,
        "Updates sent while an agent request is pending do not stop the client answering it.",
        acp("prompt-turn", "The Prompt Turn"),
    ),
    _rule(
        "client.load.replay",
        Tier.SHOULD,
        "A client that uses session/load accepts the history replayed as updates before the "
        "response.",
        acp("session-setup", "Loading Sessions"),
    ),
    _rule(
        "client.prompt.error",
        Tier.SHOULD,
        "A -32603 error answer to session/prompt ends the client's turn cleanly (no hang, no "
        "garbage on the wire).",
        jsonrpc("§5.1 Error object", "error_object"),
    ),
)
