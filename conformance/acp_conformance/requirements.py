"""The requirements registry: every rule the checker judges, and the checks bound to it.

A requirement has a stable id ``area.name``, a tier, a one-line statement and a reference
(an ACP documentation section and/or a § of the project specification). Checks are
functions registered with :func:`check` (they drive an agent inside a scenario) or
:func:`run_check` (they judge everything recorded in the whole run). The meta-test in
``tests/conformance`` enforces that every requirement has a check and every check names a
requirement.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .outcomes import Outcome
    from .scenarios.base import CheckContext, RunRecord


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

    @property
    def area(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def blocking(self) -> bool:
        """Whether a failure makes the agent non-conformant."""
        return self.tier in (Tier.MUST, Tier.CAPABILITY)


REQUIREMENTS: dict[str, Requirement] = {}


def _req(
    id: str,
    tier: Tier,
    statement: str,
    reference: str,
    *,
    gate: str | None = None,
    llm: bool = False,
) -> None:
    if id in REQUIREMENTS:
        raise ValueError(f"duplicate requirement {id}")
    if (tier is Tier.CAPABILITY) != (gate is not None) and tier is not Tier.SHOULD:
        raise ValueError(f"{id}: CAPABILITY requirements (only) need a gate")
    REQUIREMENTS[id] = Requirement(id, tier, statement, reference, gate, llm)


M, C, S, N = Tier.MUST, Tier.CAPABILITY, Tier.SHOULD, Tier.INFO
_LOAD = "agentCapabilities.loadSession"
_SC = "agentCapabilities.sessionCapabilities"

# -- transport ------------------------------------------------------------------------------
_req(
    "transport.stdout-only-json",
    M,
    "Every line the agent writes to stdout is a JSON-RPC message; logs go to stderr.",
    "ACP Transports (stdio); SPEC §1",
)
_req(
    "transport.newline-terminated",
    M,
    "Every message on stdout ends with a newline and contains no raw newline.",
    "ACP Transports (stdio); SPEC §1",
)
_req("transport.utf8", M, "stdout is valid UTF-8.", "ACP Transports (stdio); SPEC §1")

# -- JSON-RPC envelope ----------------------------------------------------------------------
_req(
    "jsonrpc.envelope-valid",
    M,
    'Every agent message has jsonrpc "2.0" and is a well-formed request, notification or response.',
    "JSON-RPC 2.0 §4-5; SPEC §1",
)
_req(
    "jsonrpc.id-echo",
    M,
    "A response carries its request's id unchanged, for integer and string ids.",
    "JSON-RPC 2.0 §5; SPEC §1",
)
_req(
    "jsonrpc.response-exclusive",
    M,
    "A response has exactly one of result and error.",
    "JSON-RPC 2.0 §5",
)
_req(
    "jsonrpc.one-response-per-request",
    M,
    "Every request gets exactly one response; the agent never answers ids it was not sent.",
    "JSON-RPC 2.0 §5; SPEC §1",
)
_req(
    "jsonrpc.notification-not-answered",
    M,
    "Notifications are never answered.",
    "JSON-RPC 2.0 §4.1; SPEC §1",
)
_req(
    "jsonrpc.parse-error",
    M,
    "A line that is not valid JSON is answered with -32700 and id null.",
    "JSON-RPC 2.0 §5.1; SPEC §1.1",
)
_req(
    "jsonrpc.invalid-request",
    M,
    "Valid JSON that is not a request object is answered with -32600.",
    "JSON-RPC 2.0 §5.1; SPEC §1.1",
)
_req(
    "jsonrpc.batch-rejected",
    S,
    "A JSON array (batch, not part of ACP) is answered with one -32600 error.",
    "SPEC §1.1",
)
_req(
    "jsonrpc.method-not-found",
    M,
    "An unknown method is answered with -32601.",
    "JSON-RPC 2.0 §5.1; SPEC §1.1",
)
_req(
    "jsonrpc.invalid-params",
    M,
    "Ill-typed params of a known method are answered with -32602.",
    "JSON-RPC 2.0 §5.1; SPEC §1.1",
)
_req(
    "jsonrpc.survives-bad-input",
    M,
    "After any bad line the agent keeps answering requests.",
    "SPEC §1.1, §12",
)
_req(
    "jsonrpc.error-shape",
    M,
    "Every error object has an integer code and a string message.",
    "JSON-RPC 2.0 §5.1; SPEC §1.1",
)

# -- robustness -----------------------------------------------------------------------------
_req(
    "robustness.oversized-line",
    S,
    "A 2 MiB line of garbage is rejected or ignored and the agent stays usable.",
    "SPEC §1.1, §12",
)
_req(
    "robustness.invalid-utf8",
    S,
    "A line that is not UTF-8 is rejected or ignored and the agent stays usable.",
    "SPEC §12",
)
_req(
    "robustness.fuzz-valid-params",
    M,
    "Schema-drawn params for advertised methods get a valid result or error; the agent never dies.",
    "SPEC §9, §12",
)
_req(
    "robustness.fuzz-invalid-params",
    S,
    "Mutated (schema-invalid) params are answered with an error, not a result.",
    "SPEC §1.1, §12",
)

# -- schema ---------------------------------------------------------------------------------
_req(
    "schema.agent-messages-valid",
    M,
    "Every agent message validates against its method's schema (responses: the request's method).",
    "ACP Schema; SPEC §9",
)
_req(
    "schema.error-data-shapes",
    S,
    "Error data follows the per-code shapes of the error schemas (e.g. -32601 names the method).",
    "SPEC §1.1",
)
_req(
    "harness.client-messages-valid",
    N,
    "The checker's own non-probe messages validate against the schemas (a harness self-check).",
    "SPEC §9",
)

# -- initialize -----------------------------------------------------------------------------
_req(
    "init.responds",
    M,
    "initialize is answered with a result that has protocolVersion and agentCapabilities.",
    "ACP Initialization",
)
_req(
    "init.version-negotiation",
    M,
    "Asked for version 1, the agent answers an integer version no greater than 1.",
    "ACP Initialization (Protocol version)",
)
_req(
    "init.unsupported-version-not-echoed",
    M,
    "Asked for an unsupported version (65535), the agent answers one it supports, never 65535.",
    "ACP Initialization (Protocol version); SPEC §2",
)
_req(
    "init.version-zero",
    S,
    "Asked for version 0, the agent answers its own supported version rather than 0 or an error.",
    "SPEC §2",
)
_req(
    "init.capabilities-shape",
    M,
    "agentCapabilities is an object; authMethods, when present, is an array.",
    "ACP Initialization (Agent capabilities)",
)
_req(
    "init.agent-info",
    S,
    "initialize returns agentInfo with a name and a version.",
    "ACP Initialization (Implementation information)",
)
_req(
    "init.repeatable",
    N,
    "A second initialize on the same connection gets a consistent answer.",
    "SPEC §2",
)

# -- auth -----------------------------------------------------------------------------------
_req(
    "auth.methods-shape",
    M,
    "Every advertised auth method has a string id and name, and ids are unique.",
    "ACP Initialization (authMethods)",
)
_req(
    "auth.unknown-method-rejected",
    M,
    "authenticate with a method id that was not advertised is rejected with an error.",
    "ACP Authentication; SPEC §2",
)
_req(
    "auth.authenticate-advertised",
    C,
    "authenticate with the advertised method chosen by --auth-method succeeds.",
    "ACP Authentication",
    gate="authMethods",
)

# -- sessions -------------------------------------------------------------------------------
_req(
    "session.new-returns-id",
    M,
    "session/new returns a non-empty string sessionId.",
    "ACP Session Setup",
)
_req(
    "session.new-unique-ids",
    M,
    "Two session/new calls return different session ids.",
    "ACP Session Setup",
)
_req(
    "session.new-relative-cwd-rejected",
    M,
    "session/new with a relative cwd is rejected with -32602.",
    "ACP Session Setup (working directory); SPEC §1.1",
)
_req(
    "session.new-mcp-servers",
    M,
    "session/new accepts an mcpServers list (empty) and _meta without failing.",
    "ACP Session Setup (MCP servers)",
)
_req(
    "session.new-unadvertised-mcp-transport",
    M,
    "session/new naming an MCP server over a transport the agent did not advertise (http, sse) "
    "is answered (result or error) and the agent stays usable.",
    "ACP Session Setup (MCP servers; mcpCapabilities); SPEC §12",
)
_req(
    "session.unknown-id-rejected",
    M,
    "prompt, set_mode and set_config_option naming an unknown session get -32602 (or -32002).",
    "SPEC §1.1, §2",
)
_req(
    "session.additional-directories",
    C,
    "session/new accepts absolute additionalDirectories when the capability is advertised.",
    "ACP Session Setup (additional directories)",
    gate=f"{_SC}.additionalDirectories",
)
_req(
    "session.load-replays-before-response",
    C,
    "session/load replays history as session/update before its response, and nothing after it.",
    "ACP Session Setup (Loading sessions); SPEC §2",
    gate=_LOAD,
)
_req(
    "session.load-unknown-id",
    C,
    "session/load of an unknown session id is rejected with -32602 (or -32002).",
    "SPEC §2",
    gate=_LOAD,
)
_req(
    "session.resume-works",
    C,
    "session/resume of an existing session succeeds without replaying history.",
    "ACP Session Setup (Resuming sessions)",
    gate=f"{_SC}.resume",
)
_req(
    "session.resume-unknown-id",
    C,
    "session/resume of an unknown session id is rejected with -32602 (or -32002).",
    "SPEC §2",
    gate=f"{_SC}.resume",
)
_req(
    "session.list-shape",
    C,
    "session/list returns a sessions array of {sessionId, cwd} entries.",
    "ACP Session List",
    gate=f"{_SC}.list",
)
_req(
    "session.list-cwd-filter",
    C,
    "session/list filtered by cwd returns only sessions with that cwd.",
    "ACP Session List",
    gate=f"{_SC}.list",
)
_req(
    "session.list-bad-cursor",
    S,
    "session/list with a cursor it never issued is rejected with -32602.",
    "SPEC §2",
    gate=f"{_SC}.list",
)
_req(
    "session.close-works",
    C,
    "session/close succeeds, and the closed session no longer accepts prompts.",
    "ACP Session Setup (Closing sessions); SPEC §2",
    gate=f"{_SC}.close",
)
_req(
    "session.close-unknown-id",
    C,
    "session/close of an unknown id succeeds (idempotent) or fails with -32602 (or -32002).",
    "SPEC §2",
    gate=f"{_SC}.close",
)
_req(
    "session.delete-works",
    C,
    "session/delete succeeds and the session disappears from session/list.",
    "SPEC §2",
    gate=f"{_SC}.delete",
)
_req(
    "session.delete-unknown-id",
    C,
    "session/delete of an unknown id succeeds (idempotent) or fails with -32602.",
    "SPEC §2",
    gate=f"{_SC}.delete",
)
_req(
    "session.fork-works",
    C,
    "session/fork returns a new, different session id.",
    "ACP session/fork (unstable); SPEC §2",
    gate=f"{_SC}.fork",
)
_req(
    "session.fork-unknown-id",
    C,
    "session/fork of an unknown session id is rejected with -32602 (or -32002).",
    "SPEC §2",
    gate=f"{_SC}.fork",
)

# -- modes and config options ---------------------------------------------------------------
_req(
    "modes.set-mode-works",
    C,
    "session/set_mode with an advertised mode succeeds.",
    "ACP Session Modes",
    gate="session.modes",
)
_req(
    "modes.current-mode-update",
    S,
    "session/set_mode is followed by a current_mode_update naming the new mode.",
    "ACP Session Modes; SPEC §2",
    gate="session.modes",
)
_req(
    "modes.unknown-mode-rejected",
    C,
    "session/set_mode with a mode that was not advertised is rejected with -32602.",
    "ACP Session Modes; SPEC §2",
    gate="session.modes",
)
_req(
    "config.set-returns-full-list",
    C,
    "session/set_config_option returns the complete configOptions list with the new value.",
    "ACP Session Config Options",
    gate="session.configOptions",
)
_req(
    "config.unknown-id-rejected",
    C,
    "session/set_config_option with an unknown configId is rejected with -32602.",
    "ACP Session Config Options; SPEC §2",
    gate="session.configOptions",
)
_req(
    "config.unknown-value-rejected",
    C,
    "session/set_config_option with a value that is not offered is rejected with -32602.",
    "ACP Session Config Options; SPEC §2",
    gate="session.configOptions",
)

# -- prompt turn ----------------------------------------------------------------------------
_req(
    "prompt.text-accepted",
    M,
    "A text prompt gets a valid stopReason (or -32000 when no credentials are configured).",
    "ACP Prompt Turn; ACP Content (baseline)",
)
_req(
    "prompt.resource-link-accepted",
    M,
    "A prompt with a resource_link block (baseline content) is not rejected as invalid.",
    "ACP Content (baseline)",
)
_req(
    "prompt.image-accepted",
    C,
    "A prompt with an image block is accepted when promptCapabilities.image is advertised.",
    "ACP Content (Image)",
    gate="agentCapabilities.promptCapabilities.image",
)
_req(
    "prompt.audio-accepted",
    C,
    "A prompt with an audio block is accepted when promptCapabilities.audio is advertised.",
    "ACP Content (Audio)",
    gate="agentCapabilities.promptCapabilities.audio",
)
_req(
    "prompt.embedded-context-accepted",
    C,
    "A prompt with an embedded resource is accepted when embeddedContext is advertised.",
    "ACP Content (Embedded resource)",
    gate="agentCapabilities.promptCapabilities.embeddedContext",
)
_req(
    "prompt.updates-before-response",
    M,
    "No turn update (message/thought chunk, tool call, plan) follows the prompt's response.",
    "ACP Prompt Turn; SPEC §1",
)
_req(
    "prompt.updates-name-known-session",
    M,
    "Every session/update names a session the agent handed out (after handing it out) or one "
    "the client named in a request the agent did not reject.",
    "ACP Prompt Turn; ACP Session Setup",
)
_req(
    "prompt.one-turn-at-a-time",
    S,
    "A second session/prompt while the session's turn runs is rejected or queued; the two turns "
    "never interleave.",
    "SPEC §2 (session/prompt)",
    llm=True,
)
_req(
    "prompt.concurrent-requests",
    S,
    "Requests sent while a prompt runs are answered without waiting for the turn to end.",
    "SPEC §1",
)
_req(
    "prompt.tool-call-permission-same-id",
    M,
    "A permission request names the toolCallId of a tool_call announced earlier in the turn.",
    "ACP Tool Calls (Requesting permission); SPEC §5",
    llm=True,
)

# -- cancellation ---------------------------------------------------------------------------
_req(
    "cancel.prompt-returns-cancelled",
    M,
    'session/cancel during a running prompt makes it answer stopReason "cancelled".',
    "ACP Prompt Turn (Cancellation); SPEC §2",
)
_req(
    "cancel.no-updates-after-response",
    M,
    "After a cancelled prompt's response no further updates for that turn arrive.",
    "ACP Prompt Turn (Cancellation); SPEC §1",
)
_req(
    "cancel.during-tool-call",
    M,
    "Cancelling while a permission request is pending ends the turn with cancelled.",
    "ACP Prompt Turn (Cancellation); SPEC §2",
    llm=True,
)

_req(
    "cancel.cancel-request-prompt",
    S,
    "$/cancel_request naming a running session/prompt makes it answer: stopReason cancelled "
    "(or -32800), or its normal result if it had already finished.",
    "ACP Cancellation ($/cancel_request); SPEC §1",
)
_req(
    "cancel.cancel-request-unknown-ignored",
    M,
    "$/cancel_request naming no in-flight request is ignored: no answer, the agent stays usable.",
    "ACP Cancellation ($/cancel_request); JSON-RPC 2.0 §4.1; SPEC §1",
)

# -- client capability gating ---------------------------------------------------------------
_req(
    "gating.no-unadvertised-client-methods",
    M,
    "The agent never calls fs/* or terminal/* methods the client did not advertise.",
    "ACP Initialization (Client capabilities); ACP File System; ACP Terminals",
)

# -- extensibility --------------------------------------------------------------------------
_req(
    "ext.unknown-request",
    M,
    "An unknown extension request (_name) is answered with -32601.",
    "ACP Extensibility",
)
_req(
    "ext.unknown-notification-ignored",
    M,
    "An unknown extension notification is ignored: no answer, agent alive.",
    "ACP Extensibility",
)
_req("ext.meta-accepted", M, "_meta fields in params are accepted.", "ACP Extensibility (_meta)")

# -- shutdown -------------------------------------------------------------------------------
_req(
    "shutdown.exits-on-stdin-eof",
    S,
    "The agent exits on its own after stdin closes (within the step timeout).",
    "SPEC §1",
)
_req(
    "shutdown.no-sigkill-needed",
    M,
    "The agent ends after stdin EOF or SIGTERM, never needing SIGKILL.",
    "SPEC §1",
)
_req("shutdown.no-orphans", S, "No process of the agent's group outlives the agent.", "SPEC §1")

# -- full prompt turns with the scripted LLM ------------------------------------------------
_req(
    "turn.streamed-text",
    M,
    "Scripted model text arrives as agent_message_chunk updates and the turn ends with end_turn.",
    "ACP Prompt Turn; SPEC §3",
    llm=True,
)
_req(
    "turn.thinking",
    S,
    "Scripted model thinking arrives as agent_thought_chunk updates.",
    "ACP Prompt Turn; SPEC §3",
    llm=True,
)
_req(
    "turn.tool-call-lifecycle",
    M,
    "A tool call is announced by tool_call and ends completed/failed before the prompt response.",
    "ACP Tool Calls; SPEC §5",
    llm=True,
)
_req(
    "turn.permission-allow",
    M,
    "An allowed write happens on disk.",
    "ACP Tool Calls (Requesting permission); SPEC §6",
    llm=True,
)
_req(
    "turn.permission-reject",
    M,
    "A rejected write does not happen on disk and its tool call does not end completed.",
    "ACP Tool Calls (Requesting permission); SPEC §6",
    llm=True,
)
_req(
    "turn.allow-always-remembered",
    S,
    "After allow_always, the same tool is not asked about again in the session.",
    "SPEC §6",
    llm=True,
)
_req(
    "turn.fs-delegation",
    N,
    "With fs capabilities advertised, file tools go through fs/* requests answered by the client.",
    "ACP File System; SPEC §5",
    llm=True,
)
_req(
    "turn.terminal-delegation",
    N,
    "With the terminal capability advertised, shell tools go through terminal/* requests.",
    "ACP Terminals; SPEC §5",
    llm=True,
)
_req(
    "turn.load-replay-fidelity",
    C,
    "session/load replays the messages and tool calls that were streamed during the turn.",
    "ACP Session Setup (Loading sessions); SPEC §2",
    gate=_LOAD,
    llm=True,
)
_req(
    "turn.fork-keeps-history",
    S,
    "A forked session replays the source's history when loaded.",
    "SPEC §2",
    gate=f"{_SC}.fork",
    llm=True,
)

del M, C, S, N

#: Registration for requirements defined next to their checks (the remote transport's).
define_requirement = _req


# -- checks ---------------------------------------------------------------------------------

ScenarioCheckFn = Callable[["CheckContext"], Awaitable["Outcome"]]
RunCheckFn = Callable[["RunRecord"], "Outcome | list[Outcome]"]


@dataclass(frozen=True)
class Check:
    """A function bound to one requirement. ``scenario`` is None for run-wide checks."""

    requirement: str
    name: str
    func: Any
    scenario: str | None


CHECKS: list[Check] = []


def check(requirement: str, *, scenario: str) -> Callable[[ScenarioCheckFn], ScenarioCheckFn]:
    """Bind an async check that drives the agent inside ``scenario`` to ``requirement``."""

    def register(func: ScenarioCheckFn) -> ScenarioCheckFn:
        CHECKS.append(Check(requirement, func.__name__, func, scenario))
        return func

    return register


def run_check(requirement: str) -> Callable[[RunCheckFn], RunCheckFn]:
    """Bind a synchronous check over the whole run's recordings to ``requirement``."""

    def register(func: RunCheckFn) -> RunCheckFn:
        CHECKS.append(Check(requirement, func.__name__, func, None))
        return func

    return register


def select(patterns: list[str]) -> list[Requirement]:
    """Requirements whose id or area matches any pattern (glob, or substring); all if none."""
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
