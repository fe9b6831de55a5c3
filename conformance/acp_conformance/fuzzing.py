"""Schema-driven params for fuzzing: values drawn from the project's schemas, plus mutated
variants that break them.

The cross-file ``$ref``s are inlined first so one self-contained schema drives the draw
(recursion is cut at a fixed depth with an "anything" schema). That only makes draws less
constrained, so every draw is validated again before it is used as a "valid" example.
"""

from __future__ import annotations

import copy
import random
import zlib
from typing import Any

_MAX_DEPTH = 6
_DROP = ("description", "title", "examples", "$comment", "default", "$schema")


def resolved_schema(file: str, name: str) -> dict[str, Any]:
    """The definition ``name`` of schema ``file`` with every reference inlined."""
    from acp_schema import definition_uri, registry

    resolver = registry().resolver()

    def inline(node: Any, resolver: Any, depth: int) -> Any:
        if isinstance(node, list):
            return [inline(item, resolver, depth) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            if depth >= _MAX_DEPTH:
                return {}
            resolved = resolver.lookup(node["$ref"])
            target = inline(resolved.contents, resolved.resolver, depth + 1)
            siblings = {k: v for k, v in node.items() if k != "$ref" and k not in _DROP}
            if not siblings:
                return target
            return {"allOf": [target, inline(siblings, resolver, depth)]}
        return {
            key: inline(value, resolver, depth)
            for key, value in node.items()
            if key not in _DROP and not key.startswith("x-") and key != "$defs"
        }

    root = resolver.lookup(definition_uri(file, name))
    schema: dict[str, Any] = inline(root.contents, root.resolver, 0)
    return schema


def generate(schema: dict[str, Any], count: int, *, seed_label: str) -> list[Any]:
    """Up to ``count`` distinct values drawn for ``schema`` (deterministic per label).

    hypothesis-jsonschema 0.23 does not run with the installed hypothesis (it calls an
    internal API that no longer exists), so values come from a small seeded generator that
    understands the keywords the ACP schemas use. Callers validate the values before
    treating them as valid.
    """
    rng = random.Random(zlib.crc32(seed_label.encode()))
    found: list[Any] = []
    for _ in range(count * 4):
        value = _draw(schema, rng, 0)
        if value is not _SKIP and value not in found:
            found.append(value)
        if len(found) >= count:
            break
    return found


class _Skip:
    pass


_SKIP: Any = _Skip()
_WORDS = ("a", "default", "model", "x", "é", "/tmp", "session-1", "", "text", "\u2603")


def _draw(schema: Any, rng: random.Random, depth: int) -> Any:
    if schema is True or schema == {} or not isinstance(schema, dict):
        return rng.choice([None, 1, "x", {}, []]) if depth < 4 else None
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if "enum" in schema:
        return copy.deepcopy(rng.choice(schema["enum"]))
    for key in ("oneOf", "anyOf"):
        if key in schema:
            arm = rng.choice(schema[key])
            rest = {k: v for k, v in schema.items() if k != key}
            return _draw(_merge(rest, arm), rng, depth)
    if "allOf" in schema:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            merged = _merge(merged, part)
        return _draw(merged, rng, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind is None:
        kind = "object" if "properties" in schema else rng.choice(["string", "integer"])
    if kind == "null":
        return None
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer":
        low = int(schema.get("minimum", -5))
        high = int(schema.get("maximum", low + 100))
        return rng.randint(low, max(low, high))
    if kind == "number":
        return round(
            rng.uniform(float(schema.get("minimum", -10)), float(schema.get("maximum", 10))), 3
        )
    if kind == "string":
        text = rng.choice(_WORDS) + (str(rng.randint(0, 999)) if rng.random() < 0.5 else "")
        minimum = int(schema.get("minLength", 0))
        return text.ljust(minimum, "x")[: schema.get("maxLength", 64)]
    if kind == "array":
        if depth > 4:
            return []
        items = schema.get("items", {})
        size = rng.randint(int(schema.get("minItems", 0)), max(int(schema.get("minItems", 0)), 2))
        return [_draw(items, rng, depth + 1) for _ in range(size)]
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        out = {}
        for name, sub in props.items():
            if name in required or (depth < 3 and rng.random() < 0.4):
                value = _draw(sub, rng, depth + 1)
                if value is not _SKIP:
                    out[name] = value
        return out
    return _SKIP


def _merge(base: dict[str, Any], extra: Any) -> dict[str, Any]:
    if not isinstance(extra, dict):
        return base
    merged = dict(base)
    for key, value in extra.items():
        if key == "properties" and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        elif key == "required" and isinstance(merged.get(key), list):
            merged[key] = sorted(set(merged[key]) | set(value))
        elif key == "allOf" and "allOf" in merged:
            merged[key] = [*merged[key], *value]
        else:
            merged[key] = value
    return merged


def mutations(schema: dict[str, Any], example: Any) -> list[tuple[str, Any]]:
    """Schema-invalid variants of a valid ``example``: a missing required field, a field of
    the wrong type, and params that are not an object at all."""
    out: list[tuple[str, Any]] = [
        ("params is an array", [example]),
        ("params is a string", "params"),
    ]
    if not isinstance(example, dict):
        return out
    required = [k for k in schema.get("required", []) if k in example]
    for key in required[:2]:
        dropped = copy.deepcopy(example)
        del dropped[key]
        out.append((f"missing required {key}", dropped))
        wrong = copy.deepcopy(example)
        wrong[key] = 12345 if isinstance(example[key], str) else "not-the-right-type"
        out.append((f"{key} has the wrong type", wrong))
    return out
