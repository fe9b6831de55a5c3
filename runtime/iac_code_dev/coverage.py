"""The protocol coverage table for users: every ACP method, update kind and capability, and
what this agent does with it (``iac-code-dev coverage``; checked in as
``docs/protocol-coverage.md``, kept current by a test).

Nothing here is typed in by hand where it can be derived, so the table cannot drift:

- the methods, their direction, stability and capability gates come from ``schema/index.json``;
  the update kinds from its ``updates`` section; the capabilities from the ``AgentCapabilities``
  and ``ClientCapabilities`` definitions of ``schema/defs/capabilities.json``;
- an agent method is supported when ``IacAgent`` overrides its generated stub, and a gated one
  only when ``initialize`` advertises the gate (the answer of :mod:`iac_code.agent.info`);
- a client method is used when the runtime's source names it, and an update kind is sent when
  the runtime's source builds an update of that kind (both read from the code with ``ast``).

Only the short explanations are written by hand (``*_NOTES`` below); a test fails when a
method, kind or capability of the schema has none, so a schema update cannot go unexplained.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

YES, NO = "✓", "✗"

#: Why (or how) for agent-side methods; the ✓/✗ itself is derived.
METHOD_NOTES: dict[str, str] = {
    "initialize": "answered by the start-up fast path within milliseconds; v1 and v2 drafts",
    "authenticate": "`anthropic-api-key` checks that a key is configured; the terminal login is"
    " run as a command, never through `authenticate`",
    "logout": "removes the key saved by the terminal login (the environment's key stays)",
    "session/new": "no network, no model call",
    "session/load": "replays the whole conversation before answering",
    "session/list": "newest first, paged, `cwd` filter",
    "session/delete": "closes the session if open, then removes it from disk",
    "session/resume": "like load, without replay",
    "session/close": "cancels a running turn and releases MCP servers and locks",
    "session/fork": "full copy of the persisted history under a new id",
    "session/set_mode": "`default`, `accept_edits`, `read_only`",
    "session/set_config_option": "model and thinking options; booleans only for clients that"
    " accept them",
    "session/prompt": "one turn at a time per session",
    "sessions/list": "alias of `session/list` (iac-code reference name)",
    "config/set": "alias of `session/set_config_option` (iac-code reference name)",
    "session/cancel": "answers the prompt with `cancelled`, stops tools, abandons permission asks",
    "$/cancel_request": "cancels an in-flight request (-32800), both directions",
    "session/request_permission": "before writes, commands and restricted reads",
    "session/update": "streaming, tool calls, plans, modes, options, titles, usage",
    "fs/read_text_file": "read_file and edit_file read the editor's buffer",
    "fs/write_text_file": "write_file and edit_file write through the editor",
    "terminal/create": "the bash tool runs in the client's terminal",
    "terminal/output": "the bash tool's output",
    "terminal/release": "after each bash command",
    "terminal/wait_for_exit": "the bash tool waits for the command",
    "terminal/kill": "timeouts and cancels",
    "elicitation/create": "the `ask_user` tool: a choice or a short text, form mode",
    "elicitation/complete": "only URL-mode elicitations end this way; the agent asks forms only",
}

#: Notes for update kinds (sent or not is derived from the source).
UPDATE_NOTES: dict[str, str] = {
    "user_message_chunk": "replay of `session/load`",
    "agent_message_chunk": "streamed answer text (and short notices)",
    "agent_thought_chunk": "extended thinking",
    "tool_call": "every tool call, `pending` first",
    "tool_call_update": "progress, diffs, terminals, final status",
    "plan": "the model's `update_plan` tool",
    "available_commands_update": "after session/new, load, resume and fork",
    "current_mode_update": "after session/set_mode",
    "config_option_update": "after session/set_config_option",
    "session_info_update": "title and update time",
    "usage_update": "context used/size after each model call",
    "notice": "model retries, for clients that advertise `session.notices` (newer than 1.21)",
    "compaction_update": "for clients that advertise `session.compaction` (newer than 1.21)",
    "compaction_summary_chunk": "the summary is not streamed (newer than 1.21)",
}

#: What the agent does with each client capability (derived facts cannot say this).
CLIENT_CAPABILITY_NOTES: dict[str, tuple[bool, str]] = {
    "clientCapabilities.fs.readTextFile": (True, "file tools read through the editor"),
    "clientCapabilities.fs.writeTextFile": (True, "file tools write through the editor"),
    "clientCapabilities.terminal": (True, "bash runs in the client's terminals"),
    "clientCapabilities.session.compaction": (True, "`compaction_update` is sent"),
    "clientCapabilities.session.configOptions.boolean": (True, "boolean config options offered"),
    "clientCapabilities.session.notices": (True, "retries are reported as `notice` updates"),
    "clientCapabilities.auth.terminal": (True, "the terminal login method is offered"),
    "clientCapabilities.elicitation.form": (True, "the `ask_user` tool is offered"),
    "clientCapabilities.elicitation.url": (False, "no flow needs a browser"),
}

#: Notes for advertised agent capabilities (advertised or not is derived).
AGENT_CAPABILITY_NOTES: dict[str, str] = {
    "agentCapabilities.loadSession": "",
    "agentCapabilities.promptCapabilities.image": "sent to the model as images",
    "agentCapabilities.promptCapabilities.audio": "the model takes no audio (a text marker is"
    " used)",
    "agentCapabilities.promptCapabilities.embeddedContext": "",
    "agentCapabilities.mcpCapabilities.http": "MCP servers over stdio only",
    "agentCapabilities.mcpCapabilities.sse": "MCP servers over stdio only",
    "agentCapabilities.sessionCapabilities.list": "",
    "agentCapabilities.sessionCapabilities.delete": "",
    "agentCapabilities.sessionCapabilities.additionalDirectories": "",
    "agentCapabilities.sessionCapabilities.resume": "",
    "agentCapabilities.sessionCapabilities.close": "",
    "agentCapabilities.sessionCapabilities.fork": "",
    "agentCapabilities.auth.logout": "",
}


@dataclass(frozen=True, slots=True)
class Line:
    cells: tuple[str, ...]


# -- facts ------------------------------------------------------------------------------


def _schema_root() -> Path:
    import acp_schema

    return Path(acp_schema.__file__).parent


@cache
def _index() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((_schema_root() / "index.json").read_text("utf-8"))
    return data


@cache
def _source_facts() -> tuple[frozenset[str], frozenset[str]]:
    """(string constants, ``sessionUpdate`` kinds built) of the v1 runtime's source."""
    import iac_code

    root = Path(iac_code.__file__).parent
    strings: set[str] = set()
    kinds: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        if "v2" in path.relative_to(root).parts:
            continue  # the v2 draft's own vocabulary is not v1 coverage
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if (
                        isinstance(key, ast.Constant)
                        and key.value == "sessionUpdate"
                        and isinstance(value, ast.Constant)
                        and isinstance(value.value, str)
                    ):
                        kinds.add(value.value)
    return frozenset(strings), frozenset(kinds)


def advertised_initialize() -> dict[str, Any]:
    """What ``initialize`` answers a client that offers every optional client capability."""
    from iac_code.agent import info

    caps = {"auth": {"terminal": True}, "elicitation": {"form": {}}}
    return info.initialize_result(1, client_capabilities=caps)


def _lookup(data: Mapping[str, Any], dotted: str) -> Any:
    value: Any = data
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _is_on(value: Any) -> bool:
    return value is True or isinstance(value, Mapping)


def _implemented(python_name: str) -> bool:
    from acp_bindings.agent import AgentHandlers
    from iac_code.agent.acp_agent import IacAgent

    return getattr(IacAgent, python_name, None) is not getattr(AgentHandlers, python_name, None)


def capability_leaves(definition: str, prefix: str) -> Iterator[str]:
    """Dotted paths of the leaf capabilities under ``definition`` (``_meta`` left out)."""
    defs = json.loads((_schema_root() / "defs" / "capabilities.json").read_text("utf-8"))
    yield from _leaves(defs["$defs"], definition, prefix)


def _leaves(defs: dict[str, Any], name: str, prefix: str) -> Iterator[str]:
    for prop, schema in defs[name].get("properties", {}).items():
        if prop == "_meta":
            continue
        path = f"{prefix}.{prop}"
        refs = [
            ref["$ref"].rsplit("/", 1)[-1]
            for key in ("allOf", "anyOf")
            for ref in schema.get(key, [])
            if isinstance(ref, dict) and ref.get("$ref", "").startswith("#/$defs/")
        ]
        nested = [r for r in refs if set(defs[r].get("properties", {})) - {"_meta"}]
        if nested:
            for ref in nested:
                yield from _leaves(defs, ref, path)
        else:
            yield path


# -- tables -----------------------------------------------------------------------------


def method_lines() -> list[Line]:
    from acp_bindings.methods import METHODS

    strings, _kinds = _source_facts()
    advertised = advertised_initialize()
    lines: list[Line] = []
    for name, entry in _index()["methods"].items():
        side, stability, gate = entry["side"], entry["stability"], entry.get("capability")
        note = METHOD_NOTES.get(name, "")
        if side == "agent":
            target = entry.get("aliasOf") or name
            ok = _implemented(METHODS[target].python_name)
            if ok and gate and gate.startswith("agentCapabilities."):
                ok = _is_on(_lookup(advertised, gate))
            verdict = YES if ok else NO
        else:  # the agent calls it (client) or both sides use it (protocol)
            verdict = YES if name in strings else NO
            if verdict == YES and gate:
                note = f"when the client offers it: {note}"
        gate_text = f"`{gate}`" if gate else "—"
        lines.append(Line((f"`{name}`", side, stability, gate_text, verdict, note)))
    return lines


def update_lines() -> list[Line]:
    _strings, kinds = _source_facts()
    return [
        Line((f"`{kind}`", YES if kind in kinds else NO, UPDATE_NOTES.get(kind, "")))
        for kind in _index()["updates"]
    ]


def agent_capability_lines() -> list[Line]:
    advertised = advertised_initialize()
    lines = []
    for path in capability_leaves("AgentCapabilities", "agentCapabilities"):
        value = _lookup(advertised, path)
        shown = json.dumps(value) if value is not None else "not advertised"
        lines.append(
            Line(
                (
                    f"`{path}`",
                    YES if _is_on(value) else NO,
                    f"`{shown}`",
                    AGENT_CAPABILITY_NOTES.get(path, ""),
                )
            )
        )
    return lines


def client_capability_lines() -> list[Line]:
    strings, _kinds = _source_facts()
    lines = []
    for path in capability_leaves("ClientCapabilities", "clientCapabilities"):
        used, note = CLIENT_CAPABILITY_NOTES.get(path, (False, ""))
        used = used and path.rsplit(".", 1)[-1] in strings  # the runtime reads that key
        lines.append(Line((f"`{path}`", YES if used else NO, note)))
    return lines


def auth_lines() -> list[Line]:
    from iac_code.agent import info

    lines = []
    for method in advertised_initialize()["authMethods"]:
        kind = method.get("type", "agent (default)")
        when = (
            "clients advertising `clientCapabilities.auth.terminal`; runs"
            f" `iac-code acp {' '.join(method.get('args', []))}` in a terminal"
            if method["id"] == info.TERMINAL_AUTH_METHOD_ID
            else "always"
        )
        lines.append(Line((f"`{method['id']}`", kind, when, method.get("description", ""))))
    return lines


def _table(header: tuple[str, ...], lines: list[Line]) -> str:
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    rows.extend("| " + " | ".join(line.cells) + " |" for line in lines)
    return "\n".join(rows)


#: Protocol version 2 in a few lines (hand-written: the tables above are v1's). Names the
#: draft ``schema/v2`` follows and how the agent treats what changed between drafts.
V2_SECTION = """\
## Protocol version 2 (draft)

A client that asks for `protocolVersion: 2` gets the newest v2 draft (the schema bundled by
the npm SDK `@agentclientprotocol/sdk` 2.4.0; `schema/v2/`), served by the same agent:

- `tool_call/cancel` stops one running tool call (a `bash` command with its whole process
  group); its final update says `cancelled`, the model is told it was stopped, and the turn
  goes on. Every `in_progress` tool call update offers `capabilities.cancel`; the final one
  withdraws it.
- `terminal/cancel` answers -32002: on v2 the agent runs commands inside their tool call and
  reports no terminals, so no terminal id is ever valid.
- `notice`, `compaction_update` and `compaction_summary_chunk` are sent as v2 updates (no
  capability gates them in v2); `availableCommands` come with the session/new and
  session/resume answers; a turn that fails ends idle with `stopReason: "error"` and the
  error object.
- `background` on the running/idle state updates: a `bash` call with `background: true`
  returns at once with a job id (the model is told the job's id and its output of the first
  second) and its command keeps running. While it runs it is listed as
  `{"type": "tool_call", "toolCallId": <the call that started it>, "_meta": {"iac_code":
  {"jobId", "command"}}}`; when a job starts or ends the current state is sent again with the
  full list (an idle sent for that carries no `stopReason`: no turn ended), `[]` once the last
  one ended. The field is left out while a session has no job. A job's whole process tree is
  stopped when its shell exits (what it left behind), its session is closed or deleted, or the
  agent exits. v1 clients get no new field (v1 has no state updates); the job still ends with
  the session. Every other `bash` call still stops every process it started when it ends.
- JSON-RPC batches: the newest draft says ACP uses none, so a v2 client of that draft never
  sends a JSON array. The agent still answers one as the drafts alpha.3 to alpha.8 define
  batches (an array of responses by id; -32600 for an empty array or an invalid entry), as
  tolerance for clients and test kits of those drafts (the official kit pins alpha.5).
"""


def render_markdown() -> str:
    version = _index().get("protocolVersion", 1)
    parts = [
        "# ACP protocol coverage of iac-code",
        "",
        "Generated by `iac-code-dev coverage` from `schema/index.json`, the capability"
        " schemas, the agent's `initialize` answer and its source; do not edit by hand"
        f" (a test checks that this file is current). Protocol version {version}.",
        "",
        "## Methods",
        "",
        "✓ for an agent method: handled (and its capability advertised); for a client method:"
        " the agent calls it.",
        "",
        _table(("method", "handled by", "stability", "gate", "iac-code", "notes"), method_lines()),
        "",
        "## Session updates",
        "",
        _table(("kind", "sent", "notes"), update_lines()),
        "",
        "## Agent capabilities (advertised by `initialize`)",
        "",
        _table(("capability", "supported", "advertised value", "notes"), agent_capability_lines()),
        "",
        "## Client capabilities (used when a client advertises them)",
        "",
        _table(("capability", "used", "what iac-code does with it"), client_capability_lines()),
        "",
        "## Authentication methods",
        "",
        _table(("id", "type", "offered to", "description"), auth_lines()),
        "",
        V2_SECTION,
    ]
    return "\n".join(parts)


def missing_notes() -> list[str]:
    """Schema entries without a hand-written explanation (a test keeps this empty)."""
    missing = [f"method {m}" for m in _index()["methods"] if m not in METHOD_NOTES]
    missing += [f"update {k}" for k in _index()["updates"] if k not in UPDATE_NOTES]
    missing += [
        f"capability {p}"
        for p in capability_leaves("ClientCapabilities", "clientCapabilities")
        if p not in CLIENT_CAPABILITY_NOTES
    ]
    missing += [
        f"capability {p}"
        for p in capability_leaves("AgentCapabilities", "agentCapabilities")
        if p not in AGENT_CAPABILITY_NOTES
    ]
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="iac-code-dev coverage")
    parser.add_argument("--write", type=Path, help="write the table to this file instead")
    args = parser.parse_args(argv)
    text = render_markdown()
    if args.write is not None:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
