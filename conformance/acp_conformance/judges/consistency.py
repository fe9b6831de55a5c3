"""Run-wide checks of what the agent's results say: no unknown root fields, current values
that are among the offered ones, features only a capable client may be sent, and errors a
user can read.

Like the checks in :mod:`.wire` these judge every recorded response of every agent process,
so no scenario has to provoke them specially.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from ..fuzzing import resolved_schema
from ..harness.agent_client import id_key
from ..harness.recorder import Frame
from ..outcomes import Outcome, Verdict, not_applicable, out_of_scope, passed, soften
from ..requirements import RUN_WIDE, check
from ..scenarios.check_context import AgentRun, RunRecord, advertised, surface_value
from ..validation import method_index
from ..versions import DEFAULT_VERSION, schema_version
from .run_walk import Offence, client_caps, per_run

#: Results that describe a session's modes and config options.
SESSION_RESULTS = frozenset(
    {"session/new", "session/load", "session/resume", "session/fork", "session/set_config_option"}
)


#: The error code ACP uses for "authentication required".
AUTH_REQUIRED = -32000


def answered_requests(run: AgentRun) -> Iterator[tuple[str, Frame, Frame]]:
    """(method, request frame, response frame) for every client request the agent answered."""
    asked: dict[str, Frame] = {}
    for frame in run.frames:
        msg = frame.message
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        if frame.direction == "c2a" and isinstance(msg.get("method"), str):
            asked[id_key(msg["id"])] = frame
        elif frame.direction == "a2c" and "method" not in msg:
            request = asked.pop(id_key(msg["id"]), None)
            if request is not None:
                yield request.message["method"], request, frame


def _results(run: AgentRun, methods: frozenset[str] | None = None) -> Iterator[tuple[str, Frame]]:
    for method, _, response in answered_requests(run):
        result = response.message.get("result")
        if isinstance(result, dict) and (methods is None or method in methods):
            yield method, response


def _properties(node: Any) -> set[str]:
    """Property names an object schema (or any branch of its combinators) declares."""
    if not isinstance(node, dict):
        return set()
    names = set(node.get("properties") or {})
    for keyword in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(keyword) or []:
            names |= _properties(branch)
    return names


#: Root fields ACP defines only in its unstable schema (RFD features such as session usage)
#: that the project's schema does not model; they are part of the specification, not custom.
UNSTABLE_RESULT_FIELDS: dict[str, frozenset[str]] = {"session/prompt": frozenset({"usage"})}


@functools.lru_cache(maxsize=64)
def result_keys(method: str, version: int = DEFAULT_VERSION) -> frozenset[str] | None:
    """The root keys ``version``'s schema allows in ``method``'s result (None: unknown)."""
    entry = method_index(version).get(method)
    if not entry or not entry.get("result") or entry.get("side") != "agent":
        return None
    names = _properties(resolved_schema(entry["file"], entry["result"], version))
    if not names:
        return None
    return frozenset(names | {"_meta"} | UNSTABLE_RESULT_FIELDS.get(method, frozenset()))


#: Root fields of agent results that a published ACP schema defines or once defined (stable
#: or unstable, any release; v1 and the v2 drafts), beyond what the project's schema of that
#: version may model, with where they are (or were) published. Such a field is ACP's own,
#: not a custom one, so an agent that still sends it is told so at SHOULD. Entries marked
#: "removed" are gone from today's schemas; the others are in the published schemas under
#: ../shared/reference (`tests/conformance/test_conformance_tiers_follow_text.py`).
_REMOVED_MODELS = (
    "removed: the unstable model-selection state (SessionModelState), 2025-09 to 2026-06"
)


_V2_SDK = "the v2 draft of the official TypeScript SDK 2.4.0"


PUBLISHED_RESULT_FIELDS: dict[str, dict[str, str]] = {
    "session/new": {
        "models": _REMOVED_MODELS,
        "modes": "v1 schema",
        "configOptions": "v1 and v2 schemas",
        "availableCommands": _V2_SDK,
    },
    "session/load": {
        "models": _REMOVED_MODELS,
        "modes": "v1 schema",
        "configOptions": "v1 schema",
        "authMethods": "removed: an early v1 draft (2025-08)",
        "authRequired": "removed: an early v1 draft (2025-08)",
    },
    "session/resume": {
        "models": _REMOVED_MODELS,
        "modes": "v1 schema",
        "configOptions": "v1 and v2 schemas",
        "availableCommands": _V2_SDK,
    },
    "session/fork": {
        "models": _REMOVED_MODELS,
        "modes": "v1 unstable schema",
        "configOptions": "v1 unstable and v2 schemas",
        "availableCommands": _V2_SDK,
    },
    "session/prompt": {
        "usage": "v1 unstable schema",
        "stopReason": "v1 schema",
        "userMessageId": "removed: the unstable message-id proposal (2026-03 to 2026-04)",
        "messageId": _V2_SDK,
    },
    "initialize": {
        "agentInfo": "v1 schema",
        "agentCapabilities": "v1 schema",
        "info": "v2 schemas",
        "capabilities": "v2 schemas",
    },
}


#: Why such a field is reported at SHOULD rather than as a custom root field.
UPSTREAM_FIELD = (
    "removed/unstable upstream field: a published ACP schema defines or defined it, so it is "
    "not a custom root field; judged as SHOULD"
)


def _extra_root_keys(run: AgentRun) -> Iterator[tuple[Frame, str, list[str], list[str]]]:
    """(response, method, custom fields, published-upstream fields) per offending result."""
    version = schema_version(run)  # a v2 run is judged by the v2 schemas
    if version is None:
        return  # a version without schemas: nothing to judge the results by
    for method, response in _results(run):
        allowed = result_keys(method, version)
        if allowed is None:
            continue
        extra = sorted(set(response.message["result"]) - allowed)
        upstream = PUBLISHED_RESULT_FIELDS.get(method, {})
        custom = [key for key in extra if key not in upstream]
        known = [key for key in extra if key in upstream]
        if extra:
            yield response, method, custom, known


@check("schema.no-unknown-root-keys", scenario=RUN_WIDE)
def no_unknown_root_keys(record: RunRecord) -> list[Outcome]:
    def custom(run: AgentRun) -> Iterator[Offence]:
        for response, method, fields, _ in _extra_root_keys(run):
            if fields:
                yield response, f"{method} result has fields the schema does not define: {fields}"

    def upstream(run: AgentRun) -> Iterator[Offence]:
        for response, method, _, fields in _extra_root_keys(run):
            if fields:
                yield response, f"{method} result has fields ACP no longer defines: {fields}"

    hard = per_run(record, custom, "results with unknown root fields")
    soft = [
        soften(outcome, UPSTREAM_FIELD)
        for outcome in per_run(record, upstream, "results with removed/unstable upstream fields")
    ]
    failures = [o for o in hard + soft if o.verdict is Verdict.FAIL]
    return failures or hard


@check("schema.stable-root-fields", scenario=RUN_WIDE)
def stable_root_fields_only(record: RunRecord) -> list[Outcome]:
    """Fields of the unstable schema at the root of a v1 result (the checker never opts in)."""

    def find(run: AgentRun) -> Iterator[Offence]:
        if schema_version(run) != DEFAULT_VERSION:
            return  # v2 results are judged by the v2 schemas alone
        for method, response in _results(run, frozenset(UNSTABLE_RESULT_FIELDS)):
            unstable = sorted(set(response.message["result"]) & UNSTABLE_RESULT_FIELDS[method])
            if unstable:
                yield (
                    response,
                    f"{method} result has unstable-only root fields {unstable} "
                    "(removed/unstable upstream field; put the numbers in _meta)",
                )

    return per_run(record, find, "results with unstable-only root fields")


def _mode_problem(modes: Any) -> str | None:
    if not isinstance(modes, dict):
        return None
    available = [m.get("id") for m in modes.get("availableModes") or [] if isinstance(m, dict)]
    current = modes.get("currentModeId")
    if current not in available:
        return f"currentModeId {current!r} is not one of availableModes {available}"
    return None


@check("modes.current-mode-valid", scenario=RUN_WIDE)
def current_mode_is_available(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for method, response in _results(run, SESSION_RESULTS):
            if why := _mode_problem(response.message["result"].get("modes")):
                yield response, f"{method}: {why}"

    return per_run(record, find, "mode states naming a mode that is not offered")


def _select_values(options: Any) -> list[Any]:
    """The values of a select option, flat or grouped."""
    values = []
    for item in options if isinstance(options, list) else []:
        if isinstance(item, dict) and isinstance(item.get("options"), list):
            values += [o.get("value") for o in item["options"] if isinstance(o, dict)]
        elif isinstance(item, dict):
            values.append(item.get("value"))
    return values


def _config_problems(config_options: Any) -> Iterator[str]:
    for option in config_options if isinstance(config_options, list) else []:
        if not isinstance(option, dict):
            continue
        current, kind = option.get("currentValue"), option.get("type")
        if kind == "select":
            values = _select_values(option.get("options"))
            if current not in values:
                yield f"option {option.get('id')!r}: currentValue {current!r} not in {values}"
        elif kind == "boolean" and not isinstance(current, bool):
            yield f"boolean option {option.get('id')!r} has currentValue {current!r}"


def _config_lists(run: AgentRun) -> Iterator[tuple[Frame, str, Any]]:
    """Every configOptions list the agent sent: in results and in config_option_update."""
    for method, response in _results(run, SESSION_RESULTS):
        if "configOptions" in response.message["result"]:
            yield response, method, response.message["result"]["configOptions"]
    for frame in run.frames:
        msg = frame.message
        if frame.direction != "a2c" or not isinstance(msg, dict):
            continue
        params = msg.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        if isinstance(update, dict) and update.get("sessionUpdate") == "config_option_update":
            yield frame, "config_option_update", update.get("configOptions")


@check("config.current-value-valid", scenario=RUN_WIDE)
def config_current_values_are_offered(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame, where, options in _config_lists(run):
            for why in _config_problems(options):
                yield frame, f"{where}: {why}"

    return per_run(record, find, "config options whose current value is not offered")


@check("config.boolean-only-when-advertised", scenario=RUN_WIDE)
def boolean_options_only_for_capable_clients(record: RunRecord) -> list[Outcome]:
    gate = "clientCapabilities.session.configOptions.boolean"

    def find(run: AgentRun) -> Iterator[Offence]:
        if advertised(surface_value(client_caps(run) or {}, gate)):
            return
        for frame, where, options in _config_lists(run):
            booleans = [
                o.get("id")
                for o in options or []
                if isinstance(o, dict) and o.get("type") == "boolean"
            ]
            if booleans:
                yield frame, f"{where} offers boolean options {booleans} without {gate}"

    return per_run(record, find, "boolean config options sent to a client that cannot show them")


def _asks_for_terminal_auth(request: Frame) -> bool:
    """Whether one ``initialize`` request advertised terminal auth: v1 sets
    ``clientCapabilities.auth.terminal``, v2 puts an object under ``capabilities.auth.terminal``.

    Judged per request because a process may be initialized more than once (the fuzzer sends
    many ``initialize`` requests to one agent), and each answer follows its own request."""
    params = request.message.get("params")
    if not isinstance(params, dict):
        return False
    caps = params.get("clientCapabilities")
    if advertised(
        surface_value({"clientCapabilities": caps or {}}, "clientCapabilities.auth.terminal")
    ):
        return True
    v2_caps = params.get("capabilities")
    auth = v2_caps.get("auth") if isinstance(v2_caps, dict) else None
    return isinstance(auth, dict) and isinstance(auth.get("terminal"), dict)


@check("gating.terminal-auth-advertised", scenario=RUN_WIDE)
def terminal_auth_only_for_capable_clients(record: RunRecord) -> list[Outcome]:
    gate = "clientCapabilities.auth.terminal"

    def find(run: AgentRun) -> Iterator[Offence]:
        for method, request, response in answered_requests(run):
            result = response.message.get("result")
            if method != "initialize" or not isinstance(result, dict):
                continue
            if _asks_for_terminal_auth(request):
                continue
            methods = result.get("authMethods") or []
            terminal = [
                m.get("id", m.get("methodId"))
                for m in methods
                if isinstance(m, dict) and m.get("type") == "terminal"
            ]
            if terminal:
                yield response, f"{method} offers terminal auth {terminal} without {gate}"

    return per_run(record, find, "terminal auth methods offered to a client that cannot run them")


@check("jsonrpc.error-message-concise", scenario=RUN_WIDE)
def error_messages_are_one_readable_line(record: RunRecord) -> list[Outcome]:
    def find(run: AgentRun) -> Iterator[Offence]:
        for frame in run.frames:
            msg = frame.message
            err = msg.get("error") if frame.direction == "a2c" and isinstance(msg, dict) else None
            if not isinstance(err, dict) or not isinstance(err.get("message"), str):
                continue  # a missing or non-string message is jsonrpc.error-shape's concern
            text = err["message"]
            if not text.strip():
                yield frame, f"error {err.get('code')} has an empty message"
            elif "\n" in text.strip():
                yield frame, f"error {err.get('code')} has a multi-line message"

    return per_run(record, find, "error messages that are empty or span several lines")


@check("session.new-without-auth-methods", scenario=RUN_WIDE)
def session_new_needs_no_auth_without_methods(record: RunRecord) -> list[Outcome]:
    judged = 0

    def find(run: AgentRun) -> Iterator[Offence]:
        nonlocal judged
        if run.init_result is None or run.init_result.get("authMethods"):
            return
        for method, _, response in answered_requests(run):
            if method != "session/new":
                continue
            judged += 1
            err = response.message.get("error")
            if isinstance(err, dict) and err.get("code") == AUTH_REQUIRED:
                yield response, "session/new demanded authentication, but authMethods is empty"

    outcomes = per_run(record, find, "session/new calls that demanded authentication")
    if not judged:
        if any(run.init_result and run.init_result.get("authMethods") for run in record.runs):
            return [out_of_scope("the agent advertises auth methods: the rule does not apply")]
        return [not_applicable("no session/new was sent to an agent without auth methods")]
    if all(o.verdict.value == "pass" for o in outcomes):
        return [passed(f"{judged} session/new calls without auth methods: none demanded auth")]
    return outcomes
