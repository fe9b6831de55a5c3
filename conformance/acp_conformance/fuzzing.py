"""Schema-driven params for fuzzing: values drawn by hypothesis-jsonschema from the project's
per-method params schemas, plus mutated variants that break them.

hypothesis-jsonschema wants one self-contained schema in a draft it knows, so the schema is
prepared on a copy first: every ``$ref`` reachable from the params definition is inlined
(recursion is cut at a fixed depth with an "anything" schema), keywords it cannot handle are
removed (``discriminator``, ``unevaluatedProperties``, formats it has no strategy for; the
integer formats become the bounds they stand for) and ``allOf`` chains of plain object
schemas are merged, which makes drawing several times faster. Cutting and removing only make
the schema less constrained, so callers validate every draw against the real schema before
they treat it as valid.

Draws are deterministic: a derandomised, generate-only Hypothesis run with no example
database collects the values, so two runs of the checker send the same params. That makes
them cacheable: they are kept under ``$XDG_CACHE_HOME/acp-conformance/draws``, keyed by the
prepared schema, the count and the generator versions.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

_MAX_DEPTH = 6
#: Annotation keywords: no effect on validity, only noise for the generator.
_ANNOTATIONS = frozenset(
    {"description", "title", "examples", "$comment", "default", "$schema", "deprecated"}
)
#: Keywords hypothesis-jsonschema rejects or misreads; dropping them only loosens the schema.
_UNSUPPORTED = frozenset({"discriminator", "unevaluatedProperties", "unevaluatedItems"})
#: String formats hypothesis-jsonschema has strategies for (others are dropped).
_STRING_FORMATS = frozenset(
    {
        "date",
        "date-time",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "time",
        "uri",
        "uuid",
    }
)
#: Integer formats of the ACP schemas, as the range they allow.
_INTEGER_FORMATS = {
    "int8": (-(2**7), 2**7 - 1),
    "uint8": (0, 2**8 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}
#: Keys an object schema may have for its ``allOf`` parts to be merged into it.
_MERGEABLE = frozenset({"type", "properties", "required", "additionalProperties", "allOf"})


def resolved_schema(file: str, name: str, version: int = 1) -> dict[str, Any]:
    """The definition ``name`` of schema ``file`` (of protocol ``version``), self-contained."""
    from acp_schema import definition_uri, registry

    resolver = registry(version).resolver()

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
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if not siblings:
                return target
            return {"allOf": [target, inline(siblings, resolver, depth)]}
        return {
            key: inline(value, resolver, depth)
            for key, value in node.items()
            if key != "$defs" and not key.startswith("x-")
        }

    root = resolver.lookup(definition_uri(file, name, version))
    return prepare(inline(root.contents, root.resolver, 0))


def prepare(schema: Any) -> Any:
    """A copy of a self-contained ``schema`` that hypothesis-jsonschema can draw from."""
    return _flatten(_strip(copy.deepcopy(schema)))


def _strip(node: Any) -> Any:
    if isinstance(node, list):
        return [_strip(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _ANNOTATIONS or key in _UNSUPPORTED or key.startswith("x-"):
            continue
        if key == "properties" and isinstance(value, dict):
            # Property *names* are data, not keywords: never strip them.
            out[key] = {name: _strip(sub) for name, sub in value.items()}
        elif key == "format":
            if value in _INTEGER_FORMATS:
                low, high = _INTEGER_FORMATS[value]
                out["minimum"] = max(low, node.get("minimum", low))
                out["maximum"] = min(high, node.get("maximum", high))
            elif value in _STRING_FORMATS:
                out[key] = value
        else:
            out[key] = _strip(value)
    return out


def _flatten(node: Any) -> Any:
    """Merge ``allOf`` parts that are plain object schemas into their parent (bottom up)."""
    if isinstance(node, list):
        return [_flatten(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {
        key: _flatten_properties(value) if key == "properties" else _flatten(value)
        for key, value in node.items()
    }
    parts = node.pop("allOf", None)
    if not isinstance(parts, list):
        return node
    rest: list[Any] = []
    for part in parts:
        merged = _merge(node, part)
        if merged is None:
            rest.append(part)
        else:
            node = merged
    if rest:
        node["allOf"] = rest
    return node


def _flatten_properties(properties: Any) -> Any:
    if not isinstance(properties, dict):
        return properties
    return {name: _flatten(sub) for name, sub in properties.items()}


def _merge(base: dict[str, Any], part: Any) -> dict[str, Any] | None:
    """``base`` and ``part`` as one schema, or None when that is not a plain union."""
    if not isinstance(part, dict) or not set(part) <= _MERGEABLE or "allOf" in part:
        return None
    if "type" in base and "type" in part and base["type"] != part["type"]:
        return None
    if "additionalProperties" in base and "additionalProperties" in part:
        return None
    merged = {**base, **{k: v for k, v in part.items() if k not in ("properties", "required")}}
    properties = dict(base.get("properties", {}))
    for name, sub in part.get("properties", {}).items():
        if name in properties:
            sub = _flatten({"allOf": [properties[name], sub]})
        properties[name] = sub
    if properties:
        merged["properties"] = properties
    required = [*base.get("required", []), *part.get("required", [])]
    if required:
        merged["required"] = list(dict.fromkeys(required))
    return merged


#: Object keywords :func:`strategy_for` composes itself; any other keyword leaves the whole
#: object to hypothesis-jsonschema.
_OBJECT_KEYS = frozenset({"type", "properties", "required", "additionalProperties"})
_ARRAY_KEYS = frozenset({"type", "items", "minItems", "maxItems"})


def strategy_for(schema: Any) -> Any:
    """A Hypothesis strategy for values valid against ``schema``.

    hypothesis-jsonschema builds the strategies of an object's properties anew on every draw
    (canonicalising each sub-schema again), which made one ``session/new`` draw cost ~0.2 s.
    So the outer structure -- plain objects, arrays and ``anyOf`` -- is composed here once from
    strategies hypothesis-jsonschema builds for each sub-schema; every other schema is left
    to it whole. The composition means what the schema means: required properties always,
    optional ones sometimes, extra properties (when allowed) under names the schema does not
    define.
    """
    from hypothesis import strategies as st
    from hypothesis_jsonschema import from_schema

    if isinstance(schema, dict):
        if set(schema) == {"anyOf"} and schema["anyOf"]:
            return st.one_of([strategy_for(arm) for arm in schema["anyOf"]])
        if schema.get("type") == "object" and set(schema) <= _OBJECT_KEYS:
            return _object_strategy(schema)
        if (
            schema.get("type") == "array"
            and set(schema) <= _ARRAY_KEYS
            and isinstance(schema.get("items"), dict)
        ):
            return st.lists(
                strategy_for(schema["items"]),
                min_size=schema.get("minItems", 0),
                max_size=schema.get("maxItems"),
            )
    return from_schema(schema)


def _object_strategy(schema: dict[str, Any]) -> Any:
    from hypothesis import strategies as st
    from hypothesis_jsonschema import from_schema

    properties: dict[str, Any] = schema.get("properties", {})
    required = schema.get("required", [])
    fixed = st.fixed_dictionaries(
        {name: strategy_for(properties.get(name, {})) for name in required},
        optional={n: strategy_for(s) for n, s in properties.items() if n not in required},
    )
    extra_schema = schema.get("additionalProperties", True)
    if extra_schema is False:
        return fixed
    extras = from_schema(
        {
            "type": "object",
            "additionalProperties": extra_schema if isinstance(extra_schema, dict) else {},
            "maxProperties": 2,
        }
    )

    def combine(parts: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
        defined, extra = parts
        return {**{k: v for k, v in extra.items() if k not in properties}, **defined}

    return st.tuples(fixed, extras).map(combine)


def draw(schema: dict[str, Any], count: int) -> list[Any]:
    """Up to ``count`` distinct values drawn from ``schema``.

    The Hypothesis run is derandomised, generate-only (no shrinking: nothing fails) and keeps
    no example database, so the same schema always gives the same values, in the same order.
    """
    if count <= 0:
        return []
    from hypothesis import HealthCheck, Phase, given, settings

    found: list[Any] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy_for(schema))
    def collect(value: Any) -> None:
        if value not in found and len(found) < count:
            found.append(value)

    collect()
    return found


def cache_dir() -> Path:
    """Where deterministic draws are kept between runs (``$XDG_CACHE_HOME/acp-conformance``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acp-conformance" / "draws"


def _draw_key(schema: dict[str, Any], count: int) -> str:
    """Everything a draw depends on: the schema, the count and the generator versions."""
    from importlib.metadata import version

    basis = json.dumps(
        [schema, count, version("hypothesis"), version("hypothesis-jsonschema")],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(basis.encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=64)
def _drawn_json(file: str, name: str, count: int) -> str:
    # Drawing is the slowest part of a run (seconds per method) and fully deterministic,
    # so the values are kept on disk and reused until the schema or the generator changes.
    schema = resolved_schema(file, name)
    path = cache_dir() / f"{_draw_key(schema, count)}.json"
    with contextlib.suppress(OSError):
        return path.read_text(encoding="utf-8")
    text = json.dumps(draw(schema, count))
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    return text


def drawn_params(file: str, name: str, count: int) -> list[Any]:
    """:func:`draw` for definition ``name`` of ``file``, memoised per process (the draw is
    deterministic, so a second checker run in the same process reuses it); fresh copies."""
    loaded: list[Any] = json.loads(_drawn_json(file, name, count))
    return loaded


def top_level_required(schema: dict[str, Any]) -> list[str]:
    """Required property names of an object schema (also those inside its ``allOf``)."""
    names = list(schema.get("required", []))
    for part in schema.get("allOf", []):
        if isinstance(part, dict):
            names += [n for n in part.get("required", []) if n not in names]
    return names


def mutations(schema: dict[str, Any], example: Any) -> list[tuple[str, Any]]:
    """Variants of a valid ``example`` that should break ``schema``: params that are not an
    object, a missing required field, a required field of the wrong type and an extra field
    of junk. Some may still be valid (a field that accepts several types, a schema that
    allows extra fields), so callers validate each variant to decide how to judge it."""
    out: list[tuple[str, Any]] = [
        ("params is an array", [example]),
        ("params is a string", "params"),
    ]
    if not isinstance(example, dict):
        return out
    for key in [k for k in top_level_required(schema) if k in example][:2]:
        dropped = copy.deepcopy(example)
        del dropped[key]
        out.append((f"missing required {key}", dropped))
        wrong = copy.deepcopy(example)
        wrong[key] = 12345 if isinstance(example[key], str) else "not-the-right-type"
        out.append((f"{key} has the wrong type", wrong))
    junk = copy.deepcopy(example)
    junk["acpConformanceJunk"] = {"unexpected": [1, "two", None]}
    out.append(("an unknown extra field", junk))
    return out
