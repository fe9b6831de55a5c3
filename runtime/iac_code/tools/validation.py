"""Checks model-supplied tool input against the tool's JSON Schema (the small subset we use).

The runtime must not import ``jsonschema`` on its hot path, and the tools' schemas only use
a few keywords, so this module understands exactly those: ``type`` (object, string, integer,
number, boolean, array), ``properties``, ``required``, ``enum``, ``minimum``, ``maximum``,
``minLength`` and ``items``. Unknown extra properties are ignored: models sometimes add
harmless fields, and refusing them would only waste a round trip.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TYPE_NAMES = {
    "object": "an object",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
}


def _has_type(value: Any, expected: str) -> bool:
    # bool is a subclass of int in Python; JSON keeps them apart, and so do we.
    if expected == "object":
        return isinstance(value, Mapping)
    if expected == "string":
        return isinstance(value, str)
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "array":
        return isinstance(value, list)
    return True


def _check(value: Any, schema: Mapping[str, Any], where: str, errors: list[str]) -> None:
    expected = schema.get("type")
    if isinstance(expected, str) and not _has_type(value, expected):
        errors.append(f"{where} must be {_TYPE_NAMES.get(expected, expected)}")
        return
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(repr(choice) for choice in schema["enum"])
        errors.append(f"{where} must be one of {choices}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where} must be at most {schema['maximum']}")
    if isinstance(value, str) and "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"{where} must not be empty")
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            _check(item, schema["items"], f"{where}[{index}]", errors)
    if isinstance(value, Mapping):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value or value[name] is None:
                errors.append(f"missing required argument '{name}'")
        for name, sub_schema in properties.items():
            if name in value and value[name] is not None:
                _check(value[name], sub_schema, f"'{name}'", errors)


def validate_input(schema: Mapping[str, Any], value: Any) -> list[str]:
    """Return human-readable problems with ``value`` (empty when it conforms).

    ``null`` for an optional property counts as absent, which is how models usually mean it.
    """
    errors: list[str] = []
    _check(value, schema, "the tool input", errors)
    return errors
