"""Differential test: our schemas and upstream's accept each other's instances.

For every method's params and result and every ``session/update`` kind, instances are
generated (hypothesis-jsonschema) from the UPSTREAM definition and validated against ours
with ``acp_schema.validation``, and generated from OUR definition and validated against
upstream with a plain draft 2020-12 validator. The drift check compares the schemas'
structure; this compares what they accept.

hypothesis-jsonschema needs a little help: keywords it does not understand (the OpenAPI
``discriminator``, integer/float ``format`` names such as ``uint16``, vendor ``x-*`` keys,
``unevaluatedProperties``) are stripped from a copy before generating. Annotations only, or
unchecked by the validators on both sides, so stripping changes nothing they accept.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import acp_schema
import pytest
from acp_schema import drift, load_index, reference
from acp_schema.validation import validate_params, validate_result, validate_update
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

UPSTREAM = reference.newest_upstream("v1")
OURS = Path(acp_schema.__file__).resolve().parent

hypothesis_jsonschema = pytest.importorskip("hypothesis_jsonschema")
_from_schema = pytest.importorskip("hypothesis_jsonschema._from_schema")

pytestmark = [pytest.mark.reference]


@pytest.fixture(autouse=True)
def _needs_newest_upstream() -> None:
    reference.require(UPSTREAM)


@pytest.fixture(scope="module", autouse=True)
def _property_strategies_built_once() -> Iterator[None]:
    """Build each object property's strategy once instead of on every draw.

    hypothesis-jsonschema 0.23 draws an object's properties inside a composite strategy that
    calls ``merged_as_strategies`` for every key of every draw: the property's schema is
    canonicalised again each time (about three quarters of this module's CPU). The schemas
    it is handed are the same dict objects on each draw, so the strategy made for them the
    first time is reused; the instances drawn are the same as without the cache.
    """
    original = _from_schema.merged_as_strategies
    made: dict[tuple[int, ...], tuple[list[Any], st.SearchStrategy[Any]]] = {}

    def merged_once(schemas: list[Any], **options: Any) -> st.SearchStrategy[Any]:
        key = (*map(id, schemas), *map(id, options.values()))
        if key not in made:
            # The schemas are kept alive beside the strategy, so their ids stay theirs.
            made[key] = (list(schemas), original(schemas, **options))
        return made[key][1]

    _from_schema.merged_as_strategies = merged_once
    try:
        yield
    finally:
        _from_schema.merged_as_strategies = original


def test_newest_upstream_is_available() -> None:
    """Stands for the parametrised tests below, which are empty without the reference: the
    reference parses, and every method role and update kind of ours became a target, most
    of them with an upstream definition to generate from."""
    assert "SessionUpdate" in _upstream_defs()
    index = load_index()
    expected = {f"update:{kind}" for kind in index["updates"]} | {
        f"{method}:{role}"
        for method, entry in index["methods"].items()
        if not entry["aliasOf"]
        for role in ("params", "result")
        if entry[role] is not None
    }
    assert set(IDS) == expected
    with_upstream = [target[0] for target in TARGETS if isinstance(target[1], dict)]
    assert len(with_upstream) > len(TARGETS) // 2, with_upstream


MAX_EXAMPLES = 8
# The session/update params are the union of all 14 update kinds, each of which is already a
# target of its own with MAX_EXAMPLES; hypothesis-jsonschema needs about a second per draw
# of the whole union, so the envelope gets a few draws only.
FEWER_EXAMPLES = {"session/update:params": 3}

EXAMPLES = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)

# Formats hypothesis-jsonschema can generate; every other `format` (int32, uint64, double, ...)
# is a width annotation that neither side's validator checks, so it is dropped.
GENERATABLE_FORMATS = frozenset({"uri", "date", "date-time", "email"})
STRIPPED_KEYWORDS = frozenset({"discriminator", "unevaluatedProperties", "title", "description"})


def _arms_are_exclusive(node: dict[str, Any]) -> bool:
    """True when no instance can match two arms of ``node["oneOf"]``.

    That holds for distinct ``const`` arms (string enums) and for a tagged union: every arm
    pins the ``discriminator`` property to a different constant.
    """
    arms = node["oneOf"]
    if all(isinstance(arm, dict) and "const" in arm for arm in arms):
        return len({json.dumps(arm["const"]) for arm in arms}) == len(arms)
    tag = (node.get("discriminator") or {}).get("propertyName")
    if tag is None:
        return False
    tags = [((arm.get("properties") or {}).get(tag) or {}).get("const", ...) for arm in arms]
    return ... not in tags and len({json.dumps(t) for t in tags}) == len(tags)


def _reachable(defs: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Only the definitions ``root`` refers to, directly or not: hypothesis-jsonschema
    resolves every definition it is given, so handing it all of them costs seconds."""
    wanted: dict[str, Any] = {}
    pending: list[Any] = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = drift.ref_target(ref)
                if name not in wanted:
                    wanted[name] = defs[name]
                    pending.append(defs[name])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return wanted


def _generatable(node: Any) -> Any:
    """Copy ``node`` without the keywords hypothesis-jsonschema cannot use (see module doc).

    Keys are only keywords where the node is a schema; under ``properties`` (and ``$defs``)
    they are names, so a property literally called ``description`` or ``format`` stays.
    """
    if isinstance(node, list):
        return [_generatable(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in STRIPPED_KEYWORDS or key.startswith("x-"):
            continue
        if key == "format" and value not in GENERATABLE_FORMATS:
            continue
        if key == "oneOf" and _arms_are_exclusive(node):
            # Exclusive arms make oneOf and anyOf accept the same instances, and anyOf
            # spares hypothesis-jsonschema from filtering every draw against all other arms.
            result["anyOf"] = _generatable(value)
            continue
        if key in ("properties", "$defs"):
            result[key] = {name: _generatable(schema) for name, schema in value.items()}
        else:
            result[key] = _generatable(value)
    return result


@functools.cache
def _upstream_defs() -> dict[str, Any]:
    defs: dict[str, Any] = json.loads(UPSTREAM.read_text(encoding="utf-8"))["$defs"]
    return defs


@functools.cache
def _our_defs() -> dict[str, Any]:
    """All our definitions in one namespace, cross-file refs rewritten to ``#/$defs/Name``."""
    return drift.load_schema_set(OURS).definitions


@functools.cache
def _upstream_validator(name: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": _upstream_defs()})


def _strategy(defs: dict[str, Any], root: dict[str, Any]) -> st.SearchStrategy[Any]:
    return hypothesis_jsonschema.from_schema(_generatable(root | {"$defs": _reachable(defs, root)}))


def _upstream_method_definition(method: str, role: str) -> str | None:
    for name, schema in _upstream_defs().items():
        if schema.get("x-method") == method and name.endswith("Response") == (role == "result"):
            return name
    return None


def _upstream_update_arm(kind: str) -> dict[str, Any]:
    for arm in _upstream_defs()["SessionUpdate"]["oneOf"]:
        if arm["properties"]["sessionUpdate"].get("const") == kind:
            return dict(arm)
    raise LookupError(kind)


# One target per method role and update kind: (test id, upstream root schema or a skip
# reason, our root schema, validate-against-ours, validate-against-upstream).
Target = tuple[str, "dict[str, Any] | str", dict[str, Any], Callable[[Any], list[str]], str]


def _targets() -> list[Target]:
    index = load_index()
    targets: list[Target] = []
    for method, entry in index["methods"].items():
        if entry["aliasOf"]:
            continue  # same definitions as the method it aliases
        for role in ("params", "result"):
            ours_name = entry[role]
            if ours_name is None:
                continue
            upstream_name = _upstream_method_definition(method, role)
            validate = (
                functools.partial(validate_params, method)
                if role == "params"
                else functools.partial(validate_result, method)
            )
            upstream_root: dict[str, Any] | str = (
                {"$ref": f"#/$defs/{upstream_name}"}
                if upstream_name
                else f"upstream stable v1 has no {role} definition for {method}"
            )
            targets.append(
                (
                    f"{method}:{role}",
                    upstream_root,
                    {"$ref": f"#/$defs/{ours_name}"},
                    validate,
                    upstream_name or "",
                )
            )
    for kind, entry in index["updates"].items():
        targets.append(
            (
                f"update:{kind}",
                _upstream_update_arm(kind),
                {"$ref": f"#/$defs/{entry['def']}"},
                validate_update,
                "SessionUpdate",
            )
        )
    return targets


TARGETS = _targets() if UPSTREAM.is_file() else []
IDS = [target[0] for target in TARGETS]


def _check_all(
    name: str, strategy: st.SearchStrategy[Any], errors_of: Callable[[Any], list[str]]
) -> None:
    @settings(EXAMPLES, max_examples=FEWER_EXAMPLES.get(name, MAX_EXAMPLES))
    @given(strategy)
    def accepted(instance: Any) -> None:
        errors = errors_of(instance)
        assert errors == [], f"{json.dumps(instance)[:400]} rejected: {errors[:3]}"

    accepted()


@pytest.mark.parametrize(
    ("name", "upstream_root", "ours_root", "validate_ours", "upstream_def"), TARGETS, ids=IDS
)
def test_upstream_instances_validate_against_ours(
    name: str,
    upstream_root: dict[str, Any] | str,
    ours_root: dict[str, Any],
    validate_ours: Callable[[Any], list[str]],
    upstream_def: str,
) -> None:
    if isinstance(upstream_root, str):
        pytest.skip(upstream_root)
    _check_all(name, _strategy(_upstream_defs(), upstream_root), validate_ours)


@pytest.mark.parametrize(
    ("name", "upstream_root", "ours_root", "validate_ours", "upstream_def"), TARGETS, ids=IDS
)
def test_our_instances_validate_against_upstream(
    name: str,
    upstream_root: dict[str, Any] | str,
    ours_root: dict[str, Any],
    validate_ours: Callable[[Any], list[str]],
    upstream_def: str,
) -> None:
    if isinstance(upstream_root, str):
        pytest.skip(upstream_root)
    validator = _upstream_validator(upstream_def)

    def upstream_errors(instance: Any) -> list[str]:
        return [re.sub(r"\s+", " ", e.message)[:160] for e in validator.iter_errors(instance)]

    _check_all(name, _strategy(_our_defs(), ours_root), upstream_errors)
