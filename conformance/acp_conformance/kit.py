"""The official ACP test kit's requirement ids, and which of ours cover each.

The kit (``agentclientprotocol/acp-tck``) keys every assertion by an id such as
``ACP-INIT-003`` and reuses ids across protocol versions with different meanings, so ids are
qualified here by version: ``v1:ACP-INIT-003``, ``v2:ACP-STATE-203``. :data:`KIT` lists each
id with the kit's tier and a one-line summary in our own words (the kit's statements are not
copied). :data:`COVERAGE` names, per requirement of ours, the kit ids it judges; a kit id is
covered when at least one of our requirements lists it, whatever tier we give it. Kit ids of
tier MANDATORY or CAPABILITY that none covers yet are in :data:`PENDING` with the reason, so
``tests/conformance/test_conformance_kit_coverage.py`` shows the gap instead of passing
silently (it fails on an uncovered id that is not pending, and on a pending id that is
covered).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class KitTier(StrEnum):
    MANDATORY = "MANDATORY"
    CAPABILITY = "CAPABILITY"
    ADVISORY = "ADVISORY"
    INFORMATIONAL = "INFORMATIONAL"


@dataclass(frozen=True)
class KitRequirement:
    id: str  # qualified: "v1:ACP-INIT-003"
    tier: KitTier
    summary: str  # our own words

    @property
    def version(self) -> int:
        return int(self.id.split(":", 1)[0][1:])

    @property
    def blocking(self) -> bool:
        return self.tier in (KitTier.MANDATORY, KitTier.CAPABILITY)


_M, _C, _A, _I = KitTier.MANDATORY, KitTier.CAPABILITY, KitTier.ADVISORY, KitTier.INFORMATIONAL

_V1: tuple[tuple[str, KitTier, str], ...] = (
    ("TRANSPORT-001", _M, "each stdout line is one JSON-RPC message"),
    ("TRANSPORT-002", _M, "stdout is UTF-8"),
    ("JSONRPC-001", _M, "responses repeat the request id (numbers and strings)"),
    ("JSONRPC-002", _M, "result xor error; errors carry an integer code and a string message"),
    ("JSONRPC-003", _M, "no response to a notification"),
    ("JSONRPC-004", _A, "an unknown method gets -32601"),
    ("JSONRPC-005", _A, "the connection stays usable after a failed request"),
    ("INIT-001", _M, "initialize succeeds with a schema-valid result and an integer version"),
    ("INIT-002", _M, "asked for version 1, the agent answers 1"),
    ("INIT-003", _M, "asked for 65535, the agent answers a version it supports, not 65535"),
    ("INIT-004", _A, "the initialize result names the agent (agentInfo name and version)"),
    ("SCHEMA-001", _M, "every message of a basic exchange is valid against the v1 schema"),
    ("SESSION-001", _M, "session/new with an absolute cwd returns a non-empty session id"),
    ("SESSION-002", _M, "two session/new calls return two different ids"),
    ("PROMPT-001", _M, "a text prompt ends with a defined stop reason"),
    ("PROMPT-002", _M, "a turn's updates are schema-valid and name the prompted session"),
    ("PROMPT-003", _A, "a prompt with a resource_link block is accepted"),
    ("CANCEL-001", _M, "session/cancel makes the running prompt answer stopReason cancelled"),
    ("CANCEL-002", _M, "no update of the cancelled session follows the prompt's answer"),
    ("LOAD-001", _C, "session/load of a known session returns a schema-valid result"),
    ("LOAD-002", _C, "session/load's replay comes before its response, none after"),
    ("LOAD-003", _A, "session/load's empty result is {} rather than null"),
    ("RESUME-001", _C, "session/resume of a known session returns a schema-valid result"),
    ("RESUME-002", _C, "session/resume sends no history updates before its response"),
    ("LIST-001", _C, "session/list with no params returns a sessions array"),
    ("LIST-002", _C, "session/list for a cwd no session uses returns an empty array"),
    ("DELETE-001", _C, "session/delete of a session made earlier returns an empty object"),
    ("DELETE-002", _A, "deleting an unknown or deleted session succeeds quietly"),
    ("CLOSE-001", _C, "session/close of an idle session returns an empty object"),
    ("CLOSE-002", _C, "session/close during a prompt ends it as cancelled"),
    ("ADDDIRS-001", _C, "session/new accepts an absolute additional directory"),
    ("MODES-001", _C, "advertised modes are valid and the current one is among them"),
    ("MODES-002", _C, "set_mode to another mode succeeds; a mode update, if sent, is well-formed"),
    ("CONFIG-001", _C, "each config option's current value fits its type and choices"),
    ("CONFIG-002", _C, "set_config_option answers the full option list with the new value"),
    ("CONFIG-003", _M, "no boolean config option unless the client declared support for it"),
    ("PROMPTCAP-001", _C, "with image advertised, an image prompt is accepted"),
    ("PROMPTCAP-002", _C, "with audio advertised, an audio prompt is accepted"),
    ("PROMPTCAP-003", _C, "with embeddedContext advertised, an embedded resource is accepted"),
    ("AUTH-001", _A, "advertised auth method ids are distinct"),
    ("AUTH-002", _M, "no terminal auth method unless the client declared terminal auth"),
    ("AUTH-003", _C, "after authenticate with a chosen method, session/new does not ask for auth"),
    ("AUTH-004", _C, "with logout advertised, logout returns an object"),
    ("AUTH-005", _A, "without auth methods, session/new does not answer -32000"),
    ("CLIENTCAP-001", _M, "no fs/* call to a client that did not declare fs"),
    ("CLIENTCAP-002", _M, "no terminal/* call to a client that did not declare terminal"),
    ("CLIENTCAP-003", _M, "no elicitation request to a client that declared no elicitation"),
    ("EXT-001", _M, "a _-prefixed custom request gets some response"),
    ("META-001", _A, "a prompt carrying _meta is accepted"),
    ("ERROR-001", _A, "error messages are non-empty single lines"),
    ("SHUTDOWN-001", _A, "the agent exits by itself once stdin closes"),
    ("SCHEMA-002", _A, "results and params carry no custom root fields"),
    ("STDERR-001", _I, "how much the agent writes to stderr (recorded only)"),
    ("INFO-PARSE-001", _I, "what the agent does with a non-JSON line (recorded only)"),
    ("INFO-INVALIDREQ-001", _I, "what the agent does with JSON that is no request (recorded)"),
    ("INFO-UNKNOWNSESSION-001", _I, "the error for a prompt to an unknown session (recorded)"),
)

_V2: tuple[tuple[str, KitTier, str], ...] = (
    ("INIT-001", _M, "a v2 initialize succeeds, whatever version is negotiated"),
    ("INIT-201", _M, "asked for 2, the agent answers 2 or, lacking it, its newest version"),
    ("INIT-003", _M, "asked for 65535, the agent does not echo it back"),
    ("INIT-202", _M, "asked for 1, the agent answers 1 or 2, never an error"),
    ("INIT-203", _M, "a v2 result carries info with a name and a version"),
    ("INIT-204", _M, "v2 capabilities are objects, never booleans"),
    ("SCHEMA-001", _M, "the initialize exchange is valid against the v2 schema"),
    ("SESSION-001", _C, "v2 session/new without mcpServers returns a session id"),
    ("SESSION-002", _C, "two v2 session/new calls return two different ids"),
    ("PROMPT-205", _C, "a v2 turn's updates are valid and name the prompted session"),
    ("PROMPT-201", _C, "v2 session/prompt answers at once with a messageId"),
    ("PROMPT-203", _C, "the user message is echoed with the prompt's messageId"),
    ("STATE-201", _C, "an idle with a stop reason is preceded by running"),
    ("STATE-202", _C, "a running turn reaches idle"),
    ("STATE-203", _C, "the idle ending a turn carries a defined or _-prefixed stop reason"),
    ("PROMPTCAP-001", _C, "v2: an advertised image prompt is accepted and the turn idles"),
    ("PROMPTCAP-002", _C, "v2: an advertised audio prompt is accepted and the turn idles"),
    ("PROMPTCAP-003", _C, "v2: an advertised embedded resource is accepted and the turn idles"),
    ("PROMPT-003", _A, "v2: a resource_link prompt is accepted"),
    ("PERM-201", _C, "v2 permission requests are well-formed and the turn goes on after one"),
    ("CLIENTCAP-201", _C, "v2: no elicitation request to a client without elicitation"),
    ("CLIENTCAP-202", _C, "v2: the agent calls only methods v2 defines (no fs/terminal)"),
    ("INFO-CONCURRENT-201", _I, "v2: a second prompt during a turn (recorded only)"),
    ("INFO-UNKNOWNSESSION-001", _I, "v2: a prompt to an unknown session (recorded only)"),
    ("CANCEL-201", _C, "v2 session/cancel ends the turn with an idle cancelled state update"),
    ("CANCEL-202", _C, "v2: the cancelled turn's updates come before its idle"),
    ("CANCEL-203", _C, "v2: a cancel never surfaces as an error or another stop reason"),
    ("CANCEL-204", _I, "v2: the agent stops model and tool work on cancel (unobservable)"),
    ("CANCEL-205", _C, "v2: session/cancel gets no response"),
    ("CANCEL-206", _C, "v2: session/cancel is accepted with and without _meta"),
    ("CANCEL-207", _C, "v2: a custom stop reason starts with _ (no invented names)"),
    ("CANCEL-208", _C, "v2: session/close during a turn cancels it"),
    ("INFO-CANCEL-201", _I, "v2: cancel of an unknown or idle session (recorded only)"),
    ("INFO-CANCEL-202", _I, "v2: whether pending agent requests are withdrawn (recorded only)"),
    ("TRANSPORT-201", _M, "v2 stdout lines are one message or a non-empty array of them"),
    ("TRANSPORT-002", _M, "v2 stdout is UTF-8"),
    ("TRANSPORT-203", _M, "v2 messages (batches too) sit on one line each"),
    ("JSONRPC-001", _M, "v2 responses repeat the request id, in batches too"),
    ("JSONRPC-002", _M, "v2: result xor error; well-formed error objects"),
    ("JSONRPC-003", _M, "v2: notifications, batched or not, get no response"),
    ("JSONRPC-004", _A, "v2: an unknown method gets -32601"),
    ("JSONRPC-005", _A, "v2: the connection survives bad requests and bad batches"),
    ("BATCH-201", _M, "an empty batch gets one -32600 with id null"),
    ("BATCH-202", _M, "notifications in a batch get no reply; a notification-only batch none"),
    ("BATCH-203", _A, "invalid batch entries get their own -32600; valid ones still run"),
    ("BATCH-204", _A, "a batch with requests is answered by one array of responses"),
    ("BATCH-205", _A, "batch responses are matched by id, in any order"),
    ("BATCH-206", _I, "batch entries may run concurrently (recorded only)"),
    ("BATCH-207", _I, "the agent may itself send batches (recorded only)"),
    ("BATCH-208", _I, "lifecycle messages should not be batched (sender side, recorded)"),
    ("INFO-BATCH-201", _I, "a non-JSON batch line (recorded only)"),
    ("INFO-BATCH-202", _I, "a batch mixing calls and responses (recorded only)"),
    ("SESSION-203", _C, "v2 session/new accepts mcpServers omitted or empty alike"),
    ("RESUME-201", _C, "v2 session/resume of a session returns a valid result"),
    ("RESUME-202", _C, "v2 resume with replay from the start replays before its response"),
    ("RESUME-203", _C, "v2 resume without replayFrom replays no history"),
    ("RESUME-204", _C, "a replayed user message keeps its prompt's messageId"),
    ("RESUME-205", _C, "in a replay, chunks of a message follow its whole-message update"),
    ("LIST-201", _C, "v2 session/list returns a valid sessions array"),
    ("LIST-202", _C, "v2 session/list for an unused cwd returns an empty array"),
    ("LIST-203", _C, "v2 session/list filtered by cwd returns only that cwd"),
    ("LIST-204", _C, "v2 listed cwds are absolute"),
    ("CLOSE-201", _C, "v2 session/close of an idle session returns an empty object"),
    ("CLOSE-202", _C, "v2 session/close during a turn cancels it"),
    ("DELETE-201", _C, "v2 session/delete of a session returns an empty object"),
    ("DELETE-202", _C, "a deleted session no longer appears in session/list"),
    ("DELETE-203", _A, "v2: deleting an unknown session succeeds quietly"),
    ("ADDDIRS-201", _C, "v2 session/new accepts an absolute additional directory"),
    ("ADDDIRS-202", _C, "v2 session/resume accepts an absolute additional directory"),
    ("MCP-201", _I, "v2: an advertised stdio MCP server entry (recorded only)"),
    ("MCP-202", _I, "v2: an advertised http MCP server entry (recorded only)"),
    ("CONFIG-201", _C, "v2 config options are well-formed (select or boolean shapes)"),
    ("CONFIG-202", _C, "v2 set_config_option answers the complete option list"),
    ("CONFIG-203", _C, "v2 session/resume's config options are well-formed"),
    ("CONFIG-204", _C, "v2: a select option's current value is among its choices"),
    ("CONFIG-206", _C, "v2 config_option_update carries the complete configuration"),
    ("AUTH-201", _A, "v2 auth method ids are distinct"),
    ("AUTH-202", _M, "v2: no terminal auth method unless the client declared terminal auth"),
    ("AUTH-203", _C, "v2 auth/logout returns a valid result"),
    ("AUTH-204", _C, "v2 auth/login with a chosen method exists and unlocks session/new"),
    ("AUTH-205", _A, "v2: without auth methods, session/new does not answer -32000"),
    ("AUTH-206", _M, "v2 auth method types are agent, terminal or _-prefixed"),
    ("AUTH-207", _M, "v2 terminal auth args/env are well-formed, env names unique"),
    ("PATCH-201", _C, "v2 message updates and chunks carry a messageId"),
    ("PATCH-203", _C, "two v2 prompts get two different messageIds"),
    ("PATCH-204", _C, "v2 tool call updates and chunks carry a toolCallId"),
    ("PATCH-205", _C, "v2 plan updates carry a planId"),
    ("PATCH-206", _C, "v2 terminal updates keep one absolute cwd per terminal"),
    ("PATCH-207", _C, "v2 terminal output data is standalone base64"),
    ("PATCH-208", _A, "a v2 tool call's first update has a title; its name never changes"),
    ("PATCH-209", _A, "v2: requires_action while a permission request waits"),
    ("ENUM-201", _C, "v2 tool kinds/statuses and plan priorities/statuses are known or _-named"),
    ("ENUM-202", _A, "other v2 open enums hold known or _-prefixed values"),
    ("ENUM-203", _A, "a _-prefixed value the client sends is tolerated"),
    ("EXT-001", _M, "v2: a _-prefixed custom request gets some response"),
    ("META-001", _A, "v2: a prompt carrying _meta is accepted"),
    ("META-201", _A, "every _meta the agent sends is an object or null"),
    ("EXT-201", _A, "v2: an unknown _ notification gets no answer and no crash"),
    ("EXT-202", _A, "v2 vendor capabilities live under capabilities._meta"),
    ("EXT-203", _I, "v2: an unknown $/ notification (recorded only)"),
    ("ERROR-001", _A, "v2 error messages are non-empty single lines"),
    ("SHUTDOWN-001", _A, "v2: the agent exits once stdin closes"),
    ("SCHEMA-002", _A, "v2 results and params carry no unknown root fields"),
    ("STDERR-001", _I, "v2: stderr volume (recorded only)"),
    ("INFO-PARSE-001", _I, "v2: a non-JSON line (recorded only)"),
    ("INFO-INVALIDREQ-001", _I, "v2: JSON that is no JSON-RPC message (recorded only)"),
)

KIT: dict[str, KitRequirement] = {
    f"v{version}:ACP-{short}": KitRequirement(f"v{version}:ACP-{short}", tier, summary)
    for version, table in ((1, _V1), (2, _V2))
    for short, tier, summary in table
}

#: Our requirement id -> the kit ids it judges (the kit's version-qualified ids).
COVERAGE: dict[str, tuple[str, ...]] = {
    # -- transport and JSON-RPC (run-wide checks judge the v2 connections' frames too) --
    # On a v2 run a line may also be a non-empty array of messages (a batch).
    "transport.stdout-only-json": ("v1:ACP-TRANSPORT-001", "v2:ACP-TRANSPORT-201"),
    "transport.newline-terminated": ("v1:ACP-TRANSPORT-001", "v2:ACP-TRANSPORT-203"),
    "transport.utf8": ("v1:ACP-TRANSPORT-002", "v2:ACP-TRANSPORT-002"),
    "jsonrpc.id-echo": ("v1:ACP-JSONRPC-001",),
    "jsonrpc.one-response-per-request": ("v1:ACP-JSONRPC-001", "v2:ACP-JSONRPC-001"),
    "jsonrpc.response-exclusive": ("v1:ACP-JSONRPC-002", "v2:ACP-JSONRPC-002"),
    "jsonrpc.error-shape": ("v1:ACP-JSONRPC-002", "v2:ACP-JSONRPC-002"),
    "jsonrpc.notification-not-answered": ("v1:ACP-JSONRPC-003",),
    "jsonrpc.method-not-found": ("v1:ACP-JSONRPC-004",),
    "jsonrpc.survives-bad-input": ("v1:ACP-JSONRPC-005",),
    "jsonrpc.parse-error": ("v1:ACP-INFO-PARSE-001",),
    "jsonrpc.invalid-request": ("v1:ACP-INFO-INVALIDREQ-001",),
    "jsonrpc.error-message-concise": ("v1:ACP-ERROR-001", "v2:ACP-ERROR-001"),
    # -- initialize and schema --
    "init.responds": ("v1:ACP-INIT-001",),
    "init.version-negotiation": ("v1:ACP-INIT-002", "v2:ACP-INIT-202"),
    "init.unsupported-version-not-echoed": ("v1:ACP-INIT-003", "v2:ACP-INIT-003"),
    "init.agent-info": ("v1:ACP-INIT-004",),
    "schema.agent-messages-valid": (
        "v1:ACP-INIT-001",
        "v1:ACP-SCHEMA-001",
        "v1:ACP-PROMPT-002",
        "v1:ACP-LOAD-001",
        "v1:ACP-LOAD-003",
        "v1:ACP-RESUME-001",
        "v2:ACP-SCHEMA-001",
    ),
    "schema.no-unknown-root-keys": ("v1:ACP-SCHEMA-002", "v2:ACP-SCHEMA-002"),
    # -- auth --
    "auth.method-ids-unique": ("v1:ACP-AUTH-001",),
    "gating.terminal-auth-advertised": ("v1:ACP-AUTH-002",),
    "auth.authenticate-advertised": ("v1:ACP-AUTH-003",),
    "auth.logout-works": ("v1:ACP-AUTH-004",),
    "session.new-without-auth-methods": ("v1:ACP-AUTH-005",),
    # -- sessions --
    "session.new-returns-id": ("v1:ACP-SESSION-001",),
    "session.new-unique-ids": ("v1:ACP-SESSION-002",),
    "session.unknown-id-rejected": ("v1:ACP-INFO-UNKNOWNSESSION-001",),
    "session.load-replays-before-response": ("v1:ACP-LOAD-001", "v1:ACP-LOAD-002"),
    "session.resume-works": ("v1:ACP-RESUME-001", "v1:ACP-RESUME-002"),
    "session.list-shape": ("v1:ACP-LIST-001",),
    "session.list-cwd-filter": ("v1:ACP-LIST-002",),
    "session.delete-works": ("v1:ACP-DELETE-001",),
    "session.delete-unknown-id": ("v1:ACP-DELETE-002",),
    "session.close-works": ("v1:ACP-CLOSE-001",),
    "session.close-cancels-prompt": ("v1:ACP-CLOSE-002",),
    "session.additional-directories": ("v1:ACP-ADDDIRS-001",),
    # -- modes and config options --
    "modes.current-mode-valid": ("v1:ACP-MODES-001",),
    "modes.set-mode-works": ("v1:ACP-MODES-002",),
    "modes.current-mode-update": ("v1:ACP-MODES-002",),
    # Judged over every session result of every run, the v2 connections' included.
    "config.current-value-valid": ("v1:ACP-CONFIG-001", "v2:ACP-CONFIG-204"),
    "config.set-returns-full-list": ("v1:ACP-CONFIG-002",),
    "config.boolean-only-when-advertised": ("v1:ACP-CONFIG-003",),
    # -- prompts and cancellation --
    "prompt.text-accepted": ("v1:ACP-PROMPT-001",),
    "prompt.updates-name-prompted-session": ("v1:ACP-PROMPT-002",),
    "prompt.updates-name-known-session": ("v1:ACP-PROMPT-002",),
    "prompt.resource-link-accepted": ("v1:ACP-PROMPT-003",),
    "prompt.image-accepted": ("v1:ACP-PROMPTCAP-001",),
    "prompt.audio-accepted": ("v1:ACP-PROMPTCAP-002",),
    "prompt.embedded-context-accepted": ("v1:ACP-PROMPTCAP-003",),
    "cancel.prompt-returns-cancelled": ("v1:ACP-CANCEL-001",),
    "cancel.no-updates-after-response": ("v1:ACP-CANCEL-002",),
    # -- client capabilities, extensibility, shutdown --
    "gating.no-unadvertised-client-methods": (
        "v1:ACP-CLIENTCAP-001",
        "v1:ACP-CLIENTCAP-002",
        "v1:ACP-CLIENTCAP-003",
    ),
    "ext.custom-request-answered": ("v1:ACP-EXT-001",),
    "ext.meta-accepted": ("v1:ACP-META-001",),
    "shutdown.exits-on-stdin-eof": ("v1:ACP-SHUTDOWN-001",),
    # -- protocol version 2 --
    "version.v2-negotiation": (
        "v2:ACP-INIT-001",
        "v2:ACP-INIT-201",
        "v2:ACP-INIT-203",
        "v2:ACP-INIT-204",
    ),
    "version.v2-newer-version": ("v2:ACP-INIT-003",),
    # The v2 session/new result is validated by the v2 schema (config option shapes too).
    "version.v2-session-new": ("v2:ACP-SESSION-001", "v2:ACP-CONFIG-201"),
    "version.v2-prompt-lifecycle": (
        "v2:ACP-PROMPT-201",
        "v2:ACP-PROMPT-205",
        "v2:ACP-STATE-201",
        "v2:ACP-STATE-202",
        "v2:ACP-STATE-203",
    ),
    "version.v2-removed-methods": ("v2:ACP-JSONRPC-004",),
    "version.v2-session-ids": ("v2:ACP-SESSION-002", "v2:ACP-SESSION-203"),
    "version.v2-custom-request-answered": ("v2:ACP-EXT-001",),
    "version.v2-notification-not-answered": ("v2:ACP-JSONRPC-003", "v2:ACP-EXT-201"),
    "version.v2-session-list": (
        "v2:ACP-LIST-201",
        "v2:ACP-LIST-202",
        "v2:ACP-LIST-203",
        "v2:ACP-LIST-204",
    ),
    "version.v2-session-delete": ("v2:ACP-DELETE-201", "v2:ACP-DELETE-202"),
    "version.v2-additional-directories": ("v2:ACP-ADDDIRS-201",),
    "version.v2-auth-methods": ("v2:ACP-AUTH-202", "v2:ACP-AUTH-206"),
    # The slow turn is cancelled at acceptance: idle "cancelled" (not an error), nothing after.
    "version.v2-cancel-ends-cancelled": (
        "v2:ACP-CANCEL-201",
        "v2:ACP-CANCEL-202",
        "v2:ACP-CANCEL-203",
    ),
    # A cancel carrying _meta: still a cancel, never answered.
    "version.v2-cancel-meta-not-answered": ("v2:ACP-CANCEL-205", "v2:ACP-CANCEL-206"),
    "version.v2-stop-reason-known": ("v2:ACP-CANCEL-207",),
    "version.v2-prompt-image-accepted": ("v2:ACP-PROMPTCAP-001",),
    "version.v2-prompt-audio-accepted": ("v2:ACP-PROMPTCAP-002",),
    "version.v2-prompt-embedded-context-accepted": ("v2:ACP-PROMPTCAP-003",),
    "version.v2-no-unadvertised-client-methods": ("v2:ACP-CLIENTCAP-201", "v2:ACP-CLIENTCAP-202"),
    "version.v2-close-idle-session": ("v2:ACP-CLOSE-201",),
    "version.v2-close-cancels-turn": ("v2:ACP-CANCEL-208", "v2:ACP-CLOSE-202"),
    "version.v2-user-message-echo": ("v2:ACP-PROMPT-203",),
    "version.v2-resume-updates-before-answer": ("v2:ACP-RESUME-202",),
    "version.v2-replay-message-whole-first": ("v2:ACP-RESUME-205",),
    "version.v2-batch-basics": ("v2:ACP-BATCH-201", "v2:ACP-BATCH-202"),
    # The kit's v2 MANDATORY and CAPABILITY ids the v2 suite of issue 20 item 2 added.
    "version.v2-resume-result": ("v2:ACP-RESUME-201", "v2:ACP-CONFIG-203"),
    "version.v2-resume-no-replay": ("v2:ACP-RESUME-203",),
    "version.v2-replay-keeps-message-id": ("v2:ACP-RESUME-204",),
    "version.v2-resume-additional-directories": ("v2:ACP-ADDDIRS-202",),
    "version.v2-set-config-full-list": ("v2:ACP-CONFIG-202",),
    "version.v2-config-update-complete": ("v2:ACP-CONFIG-206",),
    "version.v2-terminal-auth-shape": ("v2:ACP-AUTH-207",),
    "version.v2-logout": ("v2:ACP-AUTH-203",),
    "version.v2-login": ("v2:ACP-AUTH-204",),
    "version.v2-message-ids": ("v2:ACP-PATCH-201", "v2:ACP-PATCH-203"),
    "version.v2-tool-call-ids": ("v2:ACP-PATCH-204",),
    "version.v2-plan-ids": ("v2:ACP-PATCH-205",),
    "version.v2-requires-action-while-asked": ("v2:ACP-PATCH-209",),
    "version.v2-terminal-updates": ("v2:ACP-PATCH-206", "v2:ACP-PATCH-207"),
    "version.v2-open-enums": ("v2:ACP-ENUM-201",),
    "version.v2-permission-requests": ("v2:ACP-PERM-201",),
}

#: MANDATORY and CAPABILITY kit ids none of our requirements covers yet, with the reason.
PENDING: dict[str, str] = {}


def covered_by() -> dict[str, list[str]]:
    """Kit id -> our requirements that cover it (kit ids nobody covers are absent)."""
    out: dict[str, list[str]] = {}
    for ours, ids in COVERAGE.items():
        for kit_id in ids:
            out.setdefault(kit_id, []).append(ours)
    return out


def coverage_table() -> dict[int, dict[str, tuple[int, int]]]:
    """version -> kit tier -> (covered, total)."""
    covered = covered_by()
    table: dict[int, dict[str, tuple[int, int]]] = {}
    for kit_id, req in KIT.items():
        row = table.setdefault(req.version, {})
        done, total = row.get(req.tier.value, (0, 0))
        row[req.tier.value] = (done + (kit_id in covered), total + 1)
    return table
