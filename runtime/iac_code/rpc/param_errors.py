"""Turn a pydantic ``ValidationError`` into ``-32602`` data in our own words.

SPEC §1.1: invalid params carry field-level detail, ``{"<wire.path>": "<short phrase>"}``,
and never Python or pydantic text. Paths use the wire (camelCase) names and array indexes,
e.g. ``prompt.0.text``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

__all__ = ["describe_validation_error"]

_MAX_ENTRIES = 20
_AMBIGUOUS = "does not match any allowed shape"

_PHRASES: dict[str, str] = {
    "missing": "is required",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "decimal_type": "must be a number",
    "string_type": "must be a string",
    "string_unicode": "must be a string",
    "bool_type": "must be a boolean",
    "bool_parsing": "must be a boolean",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dataclass_type": "must be an object",
    "list_type": "must be an array",
    "tuple_type": "must be an array",
    "set_type": "must be an array",
    "none_required": "must be null",
    "extra_forbidden": "is not allowed",
    "string_pattern_mismatch": "has an invalid format",
    "url_type": "must be a URL",
    "url_parsing": "must be a URL",
    "uuid_type": "must be a UUID",
    "uuid_parsing": "must be a UUID",
    "datetime_type": "must be a date-time",
    "datetime_parsing": "must be a date-time",
    "date_type": "must be a date",
    "date_parsing": "must be a date",
    "union_tag_not_found": "is required",
    "frozen_field": "cannot be changed",
    "value_error": "is invalid",
    "assertion_error": "is invalid",
}

_BOUNDS: dict[str, tuple[str, str]] = {
    "greater_than": ("gt", "must be greater than {}"),
    "greater_than_equal": ("ge", "must be at least {}"),
    "less_than": ("lt", "must be less than {}"),
    "less_than_equal": ("le", "must be at most {}"),
    "multiple_of": ("multiple_of", "must be a multiple of {}"),
    "too_short": ("min_length", "must have at least {} items"),
    "too_long": ("max_length", "must have at most {} items"),
    "string_too_short": ("min_length", "must be at least {} characters long"),
    "string_too_long": ("max_length", "must be at most {} characters long"),
}

_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _choices(expected: object) -> str:
    """``"'a', 'b' or 'c'"`` (how pydantic lists allowed values) → ``"a, b, c"``."""
    text = str(expected)
    values = _QUOTED.findall(text) or re.split(r", | or ", text)
    return ", ".join(values)


def _phrase(error: ErrorDetails) -> str:
    kind = error["type"]
    context: dict[str, Any] = dict(error.get("ctx") or {})
    if kind in ("enum", "literal_error") and "expected" in context:
        return f"must be one of: {_choices(context['expected'])}"
    if kind == "union_tag_invalid" and "expected_tags" in context:
        return f"must be one of: {_choices(context['expected_tags'])}"
    if kind in _BOUNDS:
        key, template = _BOUNDS[kind]
        if key in context:
            return template.format(context[key])
    return _PHRASES.get(kind, "unexpected value")


def _wire_path(error: ErrorDetails, params: object) -> str:
    """The path of the offending value, following the input itself.

    pydantic's ``loc`` also contains labels of union arms (a tag value or a class name),
    which are not part of the wire path; walking the input tells them apart from real
    keys. The last segment of a ``missing`` error names the absent key and is kept.
    """
    parts: list[str] = []
    current: object = params
    loc = error["loc"]
    for position, segment in enumerate(loc):
        if isinstance(current, dict) and isinstance(segment, str) and segment in current:
            parts.append(segment)
            current = current[segment]
        elif isinstance(current, list) and isinstance(segment, int) and 0 <= segment < len(current):
            parts.append(str(segment))
            current = current[segment]
        elif position == len(loc) - 1 and error["type"] == "missing":
            parts.append(str(segment))
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        discriminator = str((error.get("ctx") or {}).get("discriminator", "")).strip("'\"")
        if discriminator:
            parts.append(discriminator)
    return ".".join(parts) or "params"


def describe_validation_error(exc: ValidationError, params: object) -> dict[str, str]:
    """``{"<wire.path>": "<phrase>"}`` for each failing location (at most 20)."""
    detail: dict[str, str] = {}
    for error in exc.errors(include_url=False, include_input=False):
        path = _wire_path(error, params)
        phrase = _phrase(error)
        if path in detail:
            if detail[path] != phrase:
                # Several arms of a union failed here, each for its own reason.
                detail[path] = _AMBIGUOUS
            continue
        if len(detail) < _MAX_ENTRIES:
            detail[path] = phrase
    return detail
