"""Validate ACP messages and their parts against the project's schemas.

Every function returns a list of short error strings, ``"<json path>: <message>"``; an empty
list means the value is valid. Paths are JSONPath-like and start at the value handed in
(``$``), or at the whole message for :func:`validate_message` (``$.params.sessionId``).

Union failures are explained through their arms: for a tagged union (a schema with a
``discriminator``) only the arm whose tag matches is reported, so a bad field inside an
``agent_message_chunk`` reads as that field's error rather than "not valid under any of the
given schemas".

Every function takes ``version=`` (the negotiated protocol version, default 1) and checks
against that version's schema set only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from acp_schema import DEFAULT_VERSION, definition_uri, load_index, registry

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "validate_definition",
    "validate_error",
    "validate_message",
    "validate_params",
    "validate_result",
    "validate_update",
    "validator_for",
]

JSONRPC_FILE = "defs/jsonrpc.json"
UPDATE_FILE = "notifications/session.update.json"
MAX_MESSAGE_LENGTH = 160


def validator_for(relpath: str, name: str, version: int = DEFAULT_VERSION) -> Validator:
    """Return a cached draft 2020-12 validator for definition ``name`` in file ``relpath``."""
    return _validator_for(relpath, name, version)


@functools.cache
def _validator_for(relpath: str, name: str, version: int) -> Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(
        {"$ref": definition_uri(relpath, name, version)},
        registry=registry(version),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


def validate_definition(
    relpath: str, name: str, instance: Any, *, at: str = "$", version: int = DEFAULT_VERSION
) -> list[str]:
    """Validate ``instance`` against one definition; paths in the result start at ``at``."""
    validator = validator_for(relpath, name, version)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    messages: list[str] = []
    for error in errors:
        messages.extend(_explain(error))
    return _dedupe(_rebase(message, at) for message in messages)


def validate_params(
    method: str, params: Any, *, at: str = "$", version: int = DEFAULT_VERSION
) -> list[str]:
    """Validate the params of a request or notification of ``method``.

    Absent or null params are checked as an empty object, so methods without required
    fields accept them and the others report the missing fields. Extension methods (names
    starting with ``_``) have no schema and always pass.
    """
    entry = load_index(version)["methods"].get(method)
    if entry is None:
        return [] if _is_extension(method) else [f"{at}: unknown method {method!r}"]
    instance = {} if params is None else params
    return validate_definition(entry["file"], entry["params"], instance, at=at, version=version)


def validate_result(
    method: str, result: Any, *, at: str = "$", version: int = DEFAULT_VERSION
) -> list[str]:
    """Validate the result of a successful response to a ``method`` request."""
    entry = load_index(version)["methods"].get(method)
    if entry is None:
        return [] if _is_extension(method) else [f"{at}: unknown method {method!r}"]
    if entry["result"] is None:
        return [f"{at}: {method} is a notification and has no result"]
    return validate_definition(entry["file"], entry["result"], result, at=at, version=version)


def validate_update(update: Any, *, at: str = "$", version: int = DEFAULT_VERSION) -> list[str]:
    """Validate the ``update`` object of a ``session/update`` notification."""
    return validate_definition(UPDATE_FILE, "SessionUpdate", update, at=at, version=version)


def validate_error(error_obj: Any, *, at: str = "$", version: int = DEFAULT_VERSION) -> list[str]:
    """Validate a JSON-RPC error object: the generic shape, then the shape of its code."""
    problems = validate_definition(JSONRPC_FILE, "Error", error_obj, at=at, version=version)
    if problems or not isinstance(error_obj, dict):
        return problems
    entry = load_index(version)["errors"].get(str(error_obj.get("code")))
    if entry is None:
        return []
    return validate_definition(entry["file"], entry["def"], error_obj, at=at, version=version)


def validate_message(
    message: Any, *, method: str | None = None, version: int = DEFAULT_VERSION
) -> list[str]:
    """Validate one whole JSON-RPC message.

    The envelope is checked first (``jsonrpc`` is ``"2.0"``, the id is an integer, string
    or null, and the members fit one message kind); only a sound envelope has its payload
    checked. Requests and notifications are checked against their method's params; an
    unknown method is an error unless it is an extension (``_`` prefix). A success response
    is checked against the result of ``method`` — the method of the request it answers,
    which the caller must supply because responses do not name it; without it only the
    envelope is checked. Error responses are checked with :func:`validate_error`.
    """
    if not isinstance(message, dict):
        return ["$: a message must be a JSON object"]
    kind = _message_kind(message)
    if kind is None:
        return ["$: not a request, notification or response (no method, result or error)"]
    problems = _envelope_problems(message, kind, version)
    if problems:
        return problems
    if kind in ("JsonRpcRequest", "JsonRpcNotification"):
        return _payload_problems(message, expect_request=kind == "JsonRpcRequest", version=version)
    if kind == "JsonRpcErrorResponse":
        return validate_error(message["error"], at="$.error", version=version)
    if method is None:
        return []
    return validate_result(method, message["result"], at="$.result", version=version)


def _message_kind(message: dict[str, Any]) -> str | None:
    if "method" in message:
        return "JsonRpcRequest" if "id" in message else "JsonRpcNotification"
    if "error" in message:
        return "JsonRpcErrorResponse"
    if "result" in message:
        return "JsonRpcSuccessResponse"
    return None


def _envelope_problems(message: dict[str, Any], kind: str, version: int) -> list[str]:
    if message.get("jsonrpc") != "2.0":
        return ['$.jsonrpc: must be the string "2.0"']
    if "id" in message:
        request_id = message["id"]
        # JSON Schema counts 1.0 as an integer and jsonschema rejects booleans already;
        # JSON-RPC ids must be integers, strings or null, so floats are refused here.
        if (
            isinstance(request_id, float)
            or not (request_id is None or isinstance(request_id, (int, str)))
            or isinstance(request_id, bool)
        ):
            return [f"$.id: must be an integer, a string or null, not {_json_type(request_id)}"]
    return validate_definition(JSONRPC_FILE, kind, message, version=version)


def _payload_problems(message: dict[str, Any], *, expect_request: bool, version: int) -> list[str]:
    method = message["method"]
    entry = load_index(version)["methods"].get(method)
    if entry is None and not _is_extension(method):
        return [f"$.method: unknown method {method!r}"]
    if entry is not None:
        is_request = entry["kind"] == "request"
        if is_request != expect_request:
            sent_as = "a request" if expect_request else "a notification"
            return [f"$.method: {method} is a {entry['kind']} but was sent as {sent_as}"]
    return validate_params(method, message.get("params"), at="$.params", version=version)


def _is_extension(method: str) -> bool:
    return method.startswith("_")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _explain(error: ValidationError) -> list[str]:
    """Turn one validation error into short messages, descending into failed unions."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        allowed = _enum_values(error)
        if allowed is not None:
            shown = _shorten(repr(error.instance))
            return [f"{error.json_path}: {shown} is not one of {allowed!r}"]
        arm_errors = _errors_of_matching_arm(error)
        if arm_errors is not None:
            messages: list[str] = []
            for sub in arm_errors:
                messages.extend(_explain(sub))
            return messages
        tag = _discriminator(error)
        if tag is not None:
            tag_value = error.instance.get(tag) if isinstance(error.instance, dict) else None
            if tag_value is None:
                return [f"{error.json_path}: missing tag {tag!r}"]
            return [f"{error.json_path}: unknown {tag} {tag_value!r}"]
        from jsonschema.exceptions import best_match

        best = best_match(error.context)
        if best is not None:
            return _explain(best)
    return [f"{error.json_path}: {_shorten(error.message)}"]


def _enum_values(error: ValidationError) -> list[Any] | None:
    """Return the allowed values when every arm of the union is a single constant."""
    arms = error.schema.get(str(error.validator)) if isinstance(error.schema, dict) else None
    if not isinstance(arms, list) or not arms:
        return None
    if not all(isinstance(arm, dict) and "const" in arm for arm in arms):
        return None
    return [arm["const"] for arm in arms]


def _discriminator(error: ValidationError) -> str | None:
    schema = error.schema
    if isinstance(schema, dict):
        discriminator = schema.get("discriminator")
        if isinstance(discriminator, dict) and isinstance(discriminator.get("propertyName"), str):
            return str(discriminator["propertyName"])
    return None


def _errors_of_matching_arm(error: ValidationError) -> list[ValidationError] | None:
    """For a tagged union, return the errors of the one arm whose tag matched, if any.

    The tag is the union's ``discriminator`` when it names one; otherwise (v2's open unions
    carry none) an arm counts as not matching when one of the instance's own members fails
    a ``const`` there, which is how every tagged arm pins its tag.
    """
    tag = _discriminator(error)
    if not isinstance(error.instance, dict) or (tag is not None and tag not in error.instance):
        return None
    by_arm: dict[Any, list[ValidationError]] = {}
    for sub in error.context or ():
        arm = sub.relative_schema_path[0] if sub.relative_schema_path else None
        by_arm.setdefault(arm, []).append(sub)
    matching = [
        subs for subs in by_arm.values() if not any(_is_tag_failure(sub, tag) for sub in subs)
    ]
    if len(matching) > 1:
        # An open union's catch-all arm refuses known tags through ``not``; when the tag is
        # known, the arm that names it explains the failure, not the catch-all.
        matching = [subs for subs in matching if not all(sub.validator == "not" for sub in subs)]
    return matching[0] if len(matching) == 1 else None


def _is_tag_failure(error: ValidationError, tag: str | None) -> bool:
    if tag is None:
        return len(error.path) == 1 and error.validator == "const"
    return list(error.path) == [tag] and error.validator in ("const", "enum", "type")


def _shorten(text: str) -> str:
    if len(text) <= MAX_MESSAGE_LENGTH:
        return text
    return text[: MAX_MESSAGE_LENGTH - 1] + "…"


def _rebase(message: str, at: str) -> str:
    if at == "$" or not message.startswith("$"):
        return message
    return at + message[1:]


def _dedupe(messages: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(messages))
