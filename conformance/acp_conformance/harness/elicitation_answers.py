"""The checker's answers to ``elicitation/create`` when it advertised elicitation: it accepts
every question, filling a form from its own ``requestedSchema`` (a default, the first choice,
or a plain value of the asked type), so that the agent's turn can go on."""

from __future__ import annotations

from typing import Any

#: The text given for a free-text field.
TEXT_ANSWER = "acp-conformance"


def accept(params: dict[str, Any]) -> dict[str, Any]:
    """An ``accept`` answer: a URL question is accepted as it is, a form is filled in."""
    if params.get("mode") == "url":
        return {"action": "accept"}
    schema = params.get("requestedSchema")
    fields = schema.get("properties") if isinstance(schema, dict) else None
    content = {
        name: _value(field)
        for name, field in (fields or {}).items()
        if isinstance(name, str) and isinstance(field, dict)
    }
    return {"action": "accept", "content": content}


def _value(field: dict[str, Any]) -> Any:
    if "default" in field:
        return field["default"]
    for key in ("oneOf", "anyOf"):
        options = field.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, dict) and "const" in option:
                    return option["const"]
    enum = field.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    kind = field.get("type")
    if kind == "boolean":
        return True
    if kind in ("number", "integer"):
        return field.get("minimum", 1)
    if kind == "array":
        items = field.get("items")
        return [_value(items)] if isinstance(items, dict) and field.get("minItems") else []
    return TEXT_ANSWER
