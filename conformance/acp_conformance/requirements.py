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
:func:`check`. The modules of :mod:`.checks` and :mod:`.judges` register on import; the
meta-tests in ``tests/checker/checks`` enforce that every requirement has a check and every
check names a requirement.
"""

from __future__ import annotations

import fnmatch
import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, TypeVar

from .citations import ERROR_CODES, STDIO, acp, house, jsonrpc, schema_requires
from .kit import COVERAGE as KIT_COVERAGE


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
        }


REQUIREMENTS: dict[str, Requirement] = {}


def _define(
    id: str,
    tier: Tier,
    statement: str,
    reference: str,
    *,
    gate: str | None = None,
    llm: bool = False,
    house: bool = False,
) -> Requirement:
    if id in REQUIREMENTS:
        raise ValueError(f"duplicate requirement {id}")
    if (tier is Tier.CAPABILITY) != (gate is not None) and tier is not Tier.SHOULD:
        raise ValueError(f"{id}: CAPABILITY requirements (only) need a gate")
    req = Requirement(id, tier, statement, reference, gate, llm, house)
    REQUIREMENTS[id] = req
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


_req = _define
M, C, S, N = Tier.MUST, Tier.CAPABILITY, Tier.SHOULD, Tier.INFO
_LOAD = "agentCapabilities.loadSession"
_SC = "agentCapabilities.sessionCapabilities"

# -- transport ------------------------------------------------------------------------------
_req(
    "transport.stdout-only-json",
    M,
    "Every line the agent writes to stdout is a JSON-RPC message; logs go to stderr.",
    acp(
        "transports",
        "stdio",
        "MUST NOT write anything to its stdout that is not a valid ACP message",
    ),
)
_req(
    "transport.newline-terminated",
    M,
    "Every message on stdout ends with a newline and contains no raw newline.",
    acp("transports", "stdio", "delimited by newlines, and MUST NOT contain embedded newlines"),
)
_req(
    "transport.utf8",
    M,
    "stdout is valid UTF-8.",
    acp("transports", "Transports", "JSON-RPC messages MUST be UTF-8 encoded"),
)

# -- JSON-RPC envelope ----------------------------------------------------------------------
_req(
    "jsonrpc.envelope-valid",
    M,
    'Every agent message has jsonrpc "2.0" and is a well-formed request, notification or response.',
    jsonrpc(
        "§4 Request object / §5 Response object",
        "request_object",
        'MUST be exactly "2.0" ... id: This member is REQUIRED',
    ),
)
_req(
    "jsonrpc.id-echo",
    M,
    "A response carries its request's id unchanged, for integer and string ids.",
    jsonrpc(
        "§5 Response object",
        "response_object",
        "MUST be the same as the value of the id member in the Request Object",
    ),
)
_req(
    "jsonrpc.response-exclusive",
    M,
    "A response has exactly one of result and error.",
    jsonrpc(
        "§5 Response object",
        "response_object",
        "both members MUST NOT be included",
    ),
)
_req(
    "jsonrpc.one-response-per-request",
    M,
    "Every request gets exactly one response; the agent never answers ids it was not sent.",
    jsonrpc("§5 Response object", "response_object", "the Server MUST reply with a Response"),
)
_req(
    "jsonrpc.notification-not-answered",
    M,
    "Notifications are never answered.",
    jsonrpc("§4.1 Notification", "notification", "The Server MUST NOT reply to a Notification"),
)
_req(
    "jsonrpc.parse-error",
    M,
    "A line that is not valid JSON is answered with -32700 and id null.",
    house("-32700 with id null for a non-JSON line", ERROR_CODES),
    house=True,
)
_req(
    "jsonrpc.invalid-request",
    M,
    "Valid JSON that is not a request object is answered with -32600.",
    house("-32600 for JSON that is not a request", ERROR_CODES),
    house=True,
)
_req(
    "jsonrpc.batch-rejected",
    S,
    "A JSON array (batch, not part of ACP) is answered with one -32600 error.",
    house("ACP v1 has no batches: one -32600", STDIO),
    house=True,
)
_req(
    "jsonrpc.method-not-found",
    S,
    "An unknown method is answered with -32601.",
    acp(
        "extensibility",
        "Custom requests",
        'it should respond with the standard "Method not found" error',
    )
    + "; "
    + ERROR_CODES,
)
_req(
    "jsonrpc.invalid-params",
    M,
    "Ill-typed params of a known method are answered with -32602.",
    house("-32602 for ill-typed params", ERROR_CODES),
    house=True,
)
_req(
    "jsonrpc.survives-bad-input",
    M,
    "After any bad line the agent keeps answering requests.",
    house("bad input never stops the agent", STDIO),
    house=True,
)
_req(
    "jsonrpc.error-shape",
    M,
    "Every error object has an integer code and a string message.",
    jsonrpc("§5.1 Error object", "error_object", "code ... This MUST be an integer")
    + "; "
    + schema_requires("Error.code (integer) and Error.message (string)"),
)

# -- robustness -----------------------------------------------------------------------------
_req(
    "robustness.oversized-line",
    S,
    "A 2 MiB line of garbage is rejected or ignored and the agent stays usable.",
    house("oversized lines", STDIO),
    house=True,
)
_req(
    "robustness.invalid-utf8",
    S,
    "A line that is not UTF-8 is rejected or ignored and the agent stays usable.",
    house("non-UTF-8 lines", acp("transports", "Transports")),
    house=True,
)
_req(
    "robustness.fuzz-valid-params",
    M,
    "Schema-drawn params for advertised methods get a valid result or error; the agent never dies.",
    jsonrpc(
        "§5 Response object",
        "response_object",
        "When a rpc call is made, the Server MUST reply with a Response",
    ),
)
_req(
    "robustness.fuzz-invalid-params",
    S,
    "Mutated (schema-invalid) params are answered with an error, not a result.",
    house("schema-invalid params get an error", ERROR_CODES),
    house=True,
)

# -- schema ---------------------------------------------------------------------------------
_req(
    "schema.agent-messages-valid",
    M,
    "Every agent message validates against its method's schema (responses: the request's method).",
    schema_requires("the params and result shapes of every method"),
)
_req(
    "schema.error-data-shapes",
    S,
    "Error data follows the per-code shapes of the error schemas (e.g. -32601 names the method).",
    house("per-code error data shapes of schema/errors", ERROR_CODES),
    house=True,
)
_req(
    "harness.client-messages-valid",
    N,
    "The checker's own non-probe messages validate against the schemas (a harness self-check).",
    acp(
        "transports",
        "stdio",
        "The client MUST NOT write anything to the agent's stdin that is not a valid ACP message",
    ),
)

# -- initialize -----------------------------------------------------------------------------
_req(
    "init.responds",
    M,
    "initialize is answered with a result that has protocolVersion and agentCapabilities.",
    acp(
        "initialization",
        "Initialization",
        "The Agent MUST respond with the chosen protocol version and the capabilities it supports",
    ),
)
_req(
    "init.version-negotiation",
    M,
    "Asked for version 1, the agent answers an integer version no greater than 1.",
    acp(
        "initialization",
        "Protocol version",
        "If the Agent supports the requested version, it MUST respond with the same version",
    ),
)
_req(
    "init.unsupported-version-not-echoed",
    M,
    "Asked for an unsupported version (65535), the agent answers one it supports, never 65535.",
    acp(
        "initialization",
        "Protocol version",
        "Otherwise, the Agent MUST respond with the latest version it supports",
    ),
)
_req(
    "init.version-zero",
    S,
    "Asked for version 0, the agent answers its own supported version rather than 0 or an error.",
    acp("initialization", "Protocol version"),
)
_req(
    "init.capabilities-shape",
    M,
    "agentCapabilities is an object; authMethods, when present, is an array.",
    schema_requires("InitializeResponse.agentCapabilities (object), authMethods (array)"),
)
_req(
    "init.agent-info",
    S,
    "initialize returns agentInfo with a name and a version.",
    acp("initialization", "Implementation information"),
)
_req(
    "init.repeatable",
    N,
    "A second initialize on the same connection gets a consistent answer.",
    acp("initialization", "Initialization"),
)

# -- auth -----------------------------------------------------------------------------------
_req(
    "auth.methods-shape",
    M,
    "Every advertised auth method has a string id and name.",
    schema_requires("AuthMethod.id and AuthMethod.name (strings)"),
)
_req(
    "auth.method-ids-unique",
    S,
    "The advertised auth methods have distinct ids.",
    acp("initialization", "Initialization")
    + " (authMethods; the schema describes the id as unique, with no MUST)",
)
_req(
    "auth.unknown-method-rejected",
    M,
    "authenticate with a method id that was not advertised is rejected with an error (any code).",
    house("authenticate rejects a method it never advertised", ERROR_CODES),
    house=True,
)
_req(
    "auth.authenticate-advertised",
    C,
    "authenticate with the advertised method chosen by --auth-method succeeds.",
    house(
        "authenticate with an advertised method the operator chose succeeds",
        acp("initialization", "Initialization") + " (authMethods)",
    ),
    gate="authMethods",
    house=True,
)

# -- sessions -------------------------------------------------------------------------------
_req(
    "session.new-returns-id",
    M,
    "session/new returns a non-empty string sessionId.",
    acp(
        "session-setup",
        "Session ID",
        "The Agent MUST respond with a unique Session ID that identifies this conversation",
    ),
)
_req(
    "session.new-unique-ids",
    M,
    "Two session/new calls return different session ids.",
    acp(
        "session-setup",
        "Session ID",
        "The Agent MUST respond with a unique Session ID that identifies this conversation",
    ),
)
_req(
    "session.new-relative-cwd-rejected",
    M,
    "session/new with a relative cwd is rejected with -32602.",
    house(
        "a relative cwd is -32602",
        acp("session-setup", "Working directory", "MUST be an absolute path"),
    ),
    house=True,
)
_req(
    "session.new-mcp-servers",
    M,
    "session/new accepts an mcpServers list (empty) and _meta without failing.",
    acp(
        "initialization",
        "Session Capabilities",
        "As a baseline, all Agents MUST support session/new",
    )
    + "; "
    + acp("session-setup", "MCP servers"),
)
_req(
    "session.new-unadvertised-mcp-transport",
    M,
    "session/new naming an MCP server over a transport the agent did not advertise (http, sse) "
    "is answered (result or error) and the agent stays usable.",
    jsonrpc(
        "§5 Response object",
        "response_object",
        "When a rpc call is made, the Server MUST reply with a Response",
    )
    + "; "
    + acp("session-setup", "MCP servers"),
)
_req(
    "session.unknown-id-rejected",
    M,
    "prompt, set_mode and set_config_option naming an unknown session get -32602 (or -32002).",
    house("-32602 (or -32002) for an unknown session", ERROR_CODES),
    house=True,
)
_req(
    "session.additional-directories",
    C,
    "session/new accepts absolute additionalDirectories when the capability is advertised.",
    house(
        "an advertised capability is honoured",
        acp("session-setup", "Additional Workspace Roots"),
    ),
    gate=f"{_SC}.additionalDirectories",
    house=True,
)
_req(
    "session.load-replays-before-response",
    C,
    "session/load replays history as session/update before its response, and nothing after it.",
    acp(
        "session-setup",
        "Loading sessions",
        "When all the conversation entries have been streamed to the Client, the Agent MUST "
        "respond to the original session/load request",
    ),
    gate=_LOAD,
)
_req(
    "session.load-state-before-response",
    S,
    "session/load and session/resume send every session/update of the session, the live state "
    "(available_commands_update) included, before their response: a client reading the load "
    "stops at its answer (the official test kit fails any update after it).",
    acp(
        "session-setup",
        "Loading sessions",
        "replay the entire conversation ... via session/update notifications",
    ),
    gate=_LOAD,
)
_req(
    "session.load-unknown-id",
    C,
    "session/load of an unknown session id is rejected with -32602 (or -32002).",
    house("-32602 (or -32002) for an unknown session", ERROR_CODES),
    gate=_LOAD,
    house=True,
)
_req(
    "session.resume-works",
    C,
    "session/resume of an existing session succeeds without replaying history.",
    acp(
        "session-setup",
        "Resuming sessions",
        "the Agent MUST NOT replay the conversation history via session/update notifications "
        "before responding",
    ),
    gate=f"{_SC}.resume",
)
_req(
    "session.resume-unknown-id",
    C,
    "session/resume of an unknown session id is rejected with -32602 (or -32002).",
    house("-32602 (or -32002) for an unknown session", ERROR_CODES),
    gate=f"{_SC}.resume",
    house=True,
)
_req(
    "session.list-shape",
    C,
    "session/list returns a sessions array of {sessionId, cwd} entries.",
    acp(
        "session-list",
        "Listing sessions",
        "The Agent MUST respond with a list of sessions and optional pagination metadata",
    ),
    gate=f"{_SC}.list",
)
_req(
    "session.list-cwd-filter",
    C,
    "session/list filtered by cwd returns only sessions with that cwd (an empty array when "
    "none match).",
    acp(
        "session-list",
        "Listing sessions",
        "When no sessions match the criteria, the Agent MUST return an empty sessions array",
    ),
    gate=f"{_SC}.list",
)
_req(
    "session.list-bad-cursor",
    S,
    "session/list with a cursor it never issued is rejected with -32602.",
    house("a cursor never issued is -32602", acp("session-list", "Pagination")),
    gate=f"{_SC}.list",
    house=True,
)
_req(
    "session.close-works",
    C,
    "session/close succeeds, and the closed session no longer accepts prompts.",
    acp(
        "session-setup",
        "Closing Active Sessions",
        "then free the resources associated with the session (the Agent MUST cancel any "
        "ongoing work)",
    ),
    gate=f"{_SC}.close",
)
_req(
    "session.close-unknown-id",
    C,
    "session/close of an unknown id succeeds (idempotent) or fails with -32602 (or -32002).",
    house("close is idempotent or -32602", ERROR_CODES),
    gate=f"{_SC}.close",
    house=True,
)
_req(
    "session.delete-works",
    S,
    "session/delete succeeds and the session disappears from session/list.",
    # Stable ACP (its own page), but stated without a MUST: "Deleted sessions no longer appear
    # in future session/list results", "On success, the Agent returns an empty result".
    acp("session-delete", "Semantics") + " (Deleted sessions no longer appear in session/list)",
    gate=f"{_SC}.delete",
)
_req(
    "session.delete-unknown-id",
    C,
    "session/delete of an unknown id succeeds (idempotent) or fails with -32602.",
    house("delete is idempotent or -32602", ERROR_CODES),
    gate=f"{_SC}.delete",
    house=True,
)
_req(
    "session.fork-works",
    C,
    "session/fork returns a new, different session id.",
    house(
        "an advertised session/fork answers a new session id",
        acp("session-setup", "Forking sessions"),
    ),
    gate=f"{_SC}.fork",
    house=True,
)
_req(
    "session.fork-unknown-id",
    C,
    "session/fork of an unknown session id is rejected with -32602 (or -32002).",
    house("-32602 (or -32002) for an unknown session", ERROR_CODES),
    gate=f"{_SC}.fork",
    house=True,
)

# -- modes and config options ---------------------------------------------------------------
_req(
    "modes.set-mode-works",
    C,
    "session/set_mode with an advertised mode succeeds.",
    house(
        "set_mode to an advertised mode succeeds",
        acp("session-modes", "Setting the current mode"),
    ),
    gate="session.modes",
    house=True,
)
_req(
    "modes.current-mode-update",
    S,
    "A current_mode_update that follows session/set_mode names the new mode (none is owed "
    "after the client's own change: ACP describes the update for changes the agent makes).",
    acp("session-modes", "From the Agent"),
    gate="session.modes",
)
_req(
    "modes.unknown-mode-rejected",
    C,
    "session/set_mode with a mode that was not advertised is rejected with -32602.",
    house(
        "-32602 for a mode never advertised",
        acp(
            "session-modes",
            "Setting the current mode",
            "Must be one of the modes listed in availableModes",
        ),
    ),
    gate="session.modes",
    house=True,
)
_req(
    "config.set-returns-full-list",
    C,
    "session/set_config_option returns the complete configOptions list with the new value.",
    acp(
        "session-config-options",
        "Setting a config option",
        "The Agent MUST respond with the complete list of all configuration options and their "
        "current values",
    ),
    gate="session.configOptions",
)
_req(
    "config.unknown-id-rejected",
    C,
    "session/set_config_option with an unknown configId is rejected with -32602.",
    house("-32602 for an unknown configId", ERROR_CODES),
    gate="session.configOptions",
    house=True,
)
_req(
    "config.unknown-value-rejected",
    C,
    "session/set_config_option with a value that is not offered is rejected with -32602.",
    house("-32602 for a value not offered", ERROR_CODES),
    gate="session.configOptions",
    house=True,
)

# -- prompt turn ----------------------------------------------------------------------------
_req(
    "prompt.text-accepted",
    M,
    "A text prompt gets a valid stopReason (or -32000 when no credentials are configured).",
    acp("prompt-turn", "Stop reasons")
    + "; "
    + acp(
        "initialization",
        "Prompt capabilities",
        "Agents MUST support ContentBlock::Text and ContentBlock::ResourceLink",
    ),
)
_req(
    "prompt.resource-link-accepted",
    M,
    "A prompt with a resource_link block (baseline content) is not rejected as invalid.",
    acp(
        "initialization",
        "Prompt capabilities",
        "Agents MUST support ContentBlock::Text and ContentBlock::ResourceLink",
    ),
)
_req(
    "prompt.image-accepted",
    C,
    "A prompt with an image block is accepted when promptCapabilities.image is advertised.",
    house(
        "advertised prompt content is accepted (ACP: agents MAY support it)",
        acp("content", "Image content"),
    ),
    gate="agentCapabilities.promptCapabilities.image",
    house=True,
)
_req(
    "prompt.audio-accepted",
    C,
    "A prompt with an audio block is accepted when promptCapabilities.audio is advertised.",
    house(
        "advertised prompt content is accepted (ACP: agents MAY support it)",
        acp("content", "Audio content"),
    ),
    gate="agentCapabilities.promptCapabilities.audio",
    house=True,
)
_req(
    "prompt.embedded-context-accepted",
    C,
    "A prompt with an embedded resource is accepted when embeddedContext is advertised.",
    house(
        "advertised prompt content is accepted (ACP: agents MAY support it)",
        acp("content", "Embedded resource"),
    ),
    gate="agentCapabilities.promptCapabilities.embeddedContext",
    house=True,
)
_req(
    "prompt.updates-before-response",
    M,
    "No turn update (message/thought chunk, tool call, plan) follows the prompt's response.",
    house(
        "a turn's updates come before its response",
        acp(
            "prompt-turn",
            "Check for completion",
            "the turn ends and the Agent MUST respond to the original session/prompt request",
        ),
    ),
    house=True,
)
_req(
    "prompt.updates-name-known-session",
    M,
    "Every session/update names a session the agent handed out or one the client named in a "
    "request the agent did not reject.",
    schema_requires("SessionNotification.sessionId: the session the update pertains to")
    + "; "
    + acp("session-setup", "Session ID"),
)
_req(
    "prompt.updates-after-session-handed-out",
    M,
    "No session/update names a new session before the response that hands out its id (a "
    "client cannot yet tell which session it belongs to).",
    house(
        "updates for a new session only after session/new (or fork) answered",
        acp("session-setup", "Session ID"),
    ),
    house=True,
)
_req(
    "prompt.one-turn-at-a-time",
    S,
    "A second session/prompt while the session's turn runs is rejected or queued; the two turns "
    "never interleave.",
    house("one turn per session at a time", acp("prompt-turn", "Prompt turn")),
    llm=True,
    house=True,
)
_req(
    "prompt.concurrent-requests",
    S,
    "Requests sent while a prompt runs are answered without waiting for the turn to end.",
    house(
        "requests are answered during a turn",
        acp(
            "session-modes",
            "Setting the current mode",
            "whether the Agent is idle or generating a response",
        ),
    ),
    house=True,
)
_req(
    "prompt.tool-call-permission-same-id",
    M,
    "A permission request names the toolCallId of a tool_call announced earlier in the turn.",
    house(
        "a permission request names an announced tool call",
        acp("tool-calls", "Requesting permission"),
    ),
    llm=True,
    house=True,
)

# -- cancellation ---------------------------------------------------------------------------
_req(
    "cancel.prompt-returns-cancelled",
    M,
    'session/cancel during a running prompt makes it answer stopReason "cancelled".',
    acp(
        "prompt-turn",
        "Cancellation",
        "MUST respond to the original session/prompt request with the cancelled stop reason",
    ),
)
_req(
    "cancel.no-updates-after-response",
    M,
    "After a cancelled prompt's response no further updates for that turn arrive.",
    acp(
        "prompt-turn",
        "Cancellation",
        "MUST ensure that it does so before responding to the session/prompt request",
    ),
)
_req(
    "cancel.during-tool-call",
    M,
    "Cancelling while a permission request is pending ends the turn with cancelled.",
    acp(
        "prompt-turn",
        "Cancellation",
        "MUST respond to the original session/prompt request with the cancelled stop reason",
    ),
    llm=True,
)

_req(
    "cancel.cancel-request-prompt",
    S,
    "$/cancel_request naming a running session/prompt makes it answer: stopReason cancelled "
    "(or -32800), or its normal result if it had already finished.",
    acp("cancellation", "$/cancel_request"),
)
_req(
    "cancel.cancel-request-unknown-ignored",
    M,
    "$/cancel_request naming no in-flight request is ignored: no answer, the agent stays usable.",
    jsonrpc("§4.1 Notification", "notification", "The Server MUST NOT reply to a Notification")
    + "; "
    + acp("cancellation", "$/cancel_request"),
)

# -- client capability gating ---------------------------------------------------------------
_req(
    "gating.no-unadvertised-client-methods",
    M,
    "The agent never calls fs/*, terminal/* or elicitation/* methods the client did not advertise.",
    acp(
        "initialization",
        "Client capabilities",
        "MUST treat all capabilities omitted in the initialize request as UNSUPPORTED",
    ),
)

# -- extensibility --------------------------------------------------------------------------
_req(
    "ext.unknown-request",
    M,
    "An unknown extension request (_name) is answered with -32601.",
    house("-32601 for an unknown _ request", acp("extensibility", "Custom requests")),
    house=True,
)
_req(
    "ext.unknown-notification-ignored",
    M,
    "An unknown extension notification is ignored: no answer, agent alive.",
    jsonrpc("§4.1 Notification", "notification", "The Server MUST NOT reply to a Notification")
    + "; "
    + acp("extensibility", "Custom notifications"),
)
_req(
    "ext.meta-accepted",
    M,
    "_meta fields in params are accepted.",
    house("_meta in params is accepted", acp("extensibility", "The _meta field")),
    house=True,
)

# -- shutdown -------------------------------------------------------------------------------
_req(
    "shutdown.exits-on-stdin-eof",
    S,
    "The agent exits on its own after stdin closes (within the step timeout).",
    house("exit when stdin closes", STDIO),
    house=True,
)
_req(
    "shutdown.no-sigkill-needed",
    M,
    "The agent ends after stdin EOF or SIGTERM, never needing SIGKILL.",
    house("end on stdin EOF or SIGTERM", STDIO),
    house=True,
)
_req(
    "shutdown.no-orphans",
    S,
    "No process of the agent's group outlives the agent.",
    house("no orphaned processes", STDIO),
    house=True,
)

# -- full prompt turns with the scripted LLM ------------------------------------------------
_req(
    "turn.streamed-text",
    M,
    "Scripted model text arrives as agent_message_chunk updates and the turn ends with end_turn.",
    house(
        "scripted text streams as agent_message_chunk",
        acp("prompt-turn", "Agent reports output"),
    ),
    llm=True,
    house=True,
)
_req(
    "turn.thinking",
    S,
    "Scripted model thinking arrives as agent_thought_chunk updates.",
    acp("prompt-turn", "Agent reports output"),
    llm=True,
)
_req(
    "turn.tool-call-lifecycle",
    M,
    "A tool call is announced by tool_call and ends completed/failed before the prompt response.",
    house("a tool call is announced and ends before the response", acp("tool-calls", "Updating")),
    llm=True,
    house=True,
)
_req(
    "turn.permission-allow",
    M,
    "An allowed write happens on disk.",
    house("an allowed write happens", acp("tool-calls", "Requesting permission")),
    llm=True,
    house=True,
)
_req(
    "turn.permission-reject",
    M,
    "A rejected write does not happen on disk and its tool call does not end completed.",
    house("a rejected write does not happen", acp("tool-calls", "Requesting permission")),
    llm=True,
    house=True,
)
_req(
    "turn.allow-always-remembered",
    S,
    "After allow_always, the same tool is not asked about again in the session.",
    house("allow_always is remembered in the session", acp("tool-calls", "Permission options")),
    llm=True,
    house=True,
)
_req(
    "turn.fs-delegation",
    N,
    "With fs capabilities advertised, file tools go through fs/* requests answered by the client.",
    acp("file-system", "File system"),
    llm=True,
)
_req(
    "turn.terminal-delegation",
    N,
    "With the terminal capability advertised, shell tools go through terminal/* requests.",
    acp("terminals", "Terminals"),
    llm=True,
)
_req(
    "turn.load-replay-fidelity",
    C,
    "session/load replays the messages and tool calls that were streamed during the turn.",
    acp(
        "session-setup",
        "Loading sessions",
        "The Agent MUST replay the entire conversation to the Client in the form of "
        "session/update notifications",
    ),
    gate=_LOAD,
    llm=True,
)
_req(
    "turn.fork-keeps-history",
    S,
    "A forked session replays the source's history when loaded.",
    acp("session-setup", "Forking sessions"),
    gate=f"{_SC}.fork",
    llm=True,
)

# -- result consistency and client-capability features (checks in scenarios.consistency) ----
_req(
    "schema.stable-root-fields",
    S,
    "A v1 session/prompt result carries at its root only what the stable schema defines "
    "(stopReason, _meta): `usage` exists only in the unstable schema, a removed/unstable "
    "upstream field, so its numbers belong in _meta.",
    acp(
        "extensibility",
        "The _meta field",
        "MUST NOT add any custom fields at the root of a type that's part of the specification",
    ),
)
_req(
    "schema.no-unknown-root-keys",
    M,
    "Results carry no root fields the schema does not define (e.g. the removed `models`).",
    acp(
        "extensibility",
        "The _meta field",
        "MUST NOT add any custom fields at the root of a type that's part of the specification",
    ),
)
_req(
    "modes.current-mode-valid",
    M,
    "A session's currentModeId is one of its availableModes.",
    house("currentModeId is an offered mode", acp("session-modes", "Initial state")),
    house=True,
)
_req(
    "config.current-value-valid",
    M,
    "Every config option's currentValue is one of its offered values (a boolean for boolean "
    "options).",
    acp(
        "session-config-options",
        "Default Values and Graceful Degradation",
        "Agents MUST always provide a default value for every configuration option",
    ),
)
_req(
    "config.boolean-only-when-advertised",
    M,
    "Boolean config options are sent only to clients that set "
    "clientCapabilities.session.configOptions.boolean.",
    acp(
        "initialization",
        "Client capabilities",
        "MUST treat all capabilities omitted in the initialize request as UNSUPPORTED",
    ),
)
_req(
    "gating.terminal-auth-advertised",
    M,
    "Terminal auth methods are offered only to clients that set clientCapabilities.auth.terminal.",
    acp(
        "initialization",
        "Client capabilities",
        "MUST treat all capabilities omitted in the initialize request as UNSUPPORTED",
    ),
)
_req(
    "jsonrpc.error-message-concise",
    S,
    "Every error message is a non-empty single line.",
    jsonrpc("§5.1 Error object", "error_object", "SHOULD be limited to a concise single sentence"),
)
_req(
    "session.new-without-auth-methods",
    M,
    "With no authMethods advertised, session/new never demands authentication (-32000).",
    house(
        "no -32000 without auth methods",
        acp("initialization", "Initialization") + " (authMethods)",
    ),
    house=True,
)
_req(
    "session.close-cancels-prompt",
    C,
    "session/close of a session with a running prompt ends that prompt (cancelled or an error).",
    acp(
        "session-setup",
        "Closing Active Sessions",
        "The Agent MUST cancel any ongoing work for that session as if session/cancel had been "
        "called",
    ),
    gate=f"{_SC}.close",
)
_req(
    "auth.logout-works",
    C,
    "logout succeeds when agentCapabilities.auth.logout is advertised, and the agent stays usable.",
    house(
        "an advertised logout succeeds",
        acp("initialization", "Agent capabilities") + " (auth.logout)",
    ),
    gate="agentCapabilities.auth.logout",
    house=True,
)
_req(
    "ext.null-and-empty-tolerated",
    S,
    "Optional objects given as null or as {} (e.g. _meta) are accepted alike.",
    acp("extensibility", "The _meta field"),
)

del M, C, S, N


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


CHECKS: list[Check] = []


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
) -> Callable[[CheckFn], CheckFn]:
    """Define a requirement and bind the decorated function to it as its check.

    ``citation`` is the public text the rule comes from (:mod:`.citations`); ``gate`` a dotted
    path into the agent's advertised surface (CAPABILITY requirements); ``llm`` that it needs
    a scripted model turn; ``house`` that it is an iac-code house rule. ``scenario`` is the
    scenario the async check runs in, or :data:`RUN_WIDE` for a synchronous judge of the
    whole run; ``budget`` bounds the check in multiples of ``--timeout``.
    """
    _define(id, tier, statement, citation, gate=gate, llm=llm, house=house)
    return check(id, scenario=scenario, budget=budget)


def check(
    requirement: str, *, scenario: str | None, budget: float = DEFAULT_BUDGET
) -> Callable[[CheckFn], CheckFn]:
    """Bind one more check to a requirement defined elsewhere (by :func:`requirement`, or by
    :func:`define_requirement` in modules not converted yet)."""

    def register(func: CheckFn) -> CheckFn:
        if inspect.iscoroutinefunction(func) != (scenario is not None):
            kind = "an async check in a scenario" if scenario else "a synchronous run-wide judge"
            raise TypeError(f"{func.__name__} ({requirement}) must be {kind}")
        CHECKS.append(Check(requirement, func.__name__, func, scenario, budget))
        return func

    return register


def run_check(requirement: str) -> Callable[[CheckFn], CheckFn]:
    """``check(requirement, scenario=RUN_WIDE)``: kept for modules not converted yet."""
    return check(requirement, scenario=RUN_WIDE)


def define_requirement(
    id: str,
    tier: Tier,
    statement: str,
    reference: str,
    *,
    gate: str | None = None,
    llm: bool = False,
    house: bool = False,
) -> None:
    """The older way: a requirement defined on its own, its check bound by :func:`check`.
    Kept as a thin compatibility path; new checks use :func:`requirement`."""
    _define(id, tier, statement, reference, gate=gate, llm=llm, house=house)


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
