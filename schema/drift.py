"""Drift check: compare the project's schemas with an upstream ACP schema file.

Usage::

    python -m acp_schema.drift --upstream ../shared/reference/acp-npm-sdk-2.4.0/v1/schema.json
    python -m acp_schema.drift --upstream OLD.json --ours NEW.json --json

The two sides are written in different styles: upstream is one file whose properties wrap
references in ``allOf`` and whose unions carry their arms inline; ours is a folder of files
with cross-file references and one file per ``session/update`` arm. Comparing raw JSON would
report style, so both sides are first reduced to one *model* that keeps only what changes the
wire: methods (``x-method``/``x-side``), ``session/update`` kinds, and per definition its
properties, required set, JSON types (with nullability), enum/const values and union arms.
Descriptions, titles and vendor keywords never reach the model.

Direction: ``--upstream`` is the baseline and ``--ours`` the compared side. The report groups
findings as **upstream has, we lack** (``*_removed`` categories: what a maintainer must add,
shown with its field shapes), **we have, upstream lacks** (``*_added``) and **both have, shapes
differ**. ``--scaffold`` writes the skeleton of every method and update kind upstream has and
we lack (see :mod:`acp_schema.scaffold`). To compare two upstream releases, pass the old one
as ``--upstream`` and the new one as ``--ours``: "upstream has, we lack" then reads "the old
release has, the new one dropped".

Expected differences are listed in an allowlist (``drift-allowlist.json``), each with a
reason. An entry that no longer matches any difference is stale and fails the check, so the
allowlist cannot silently outlive the difference it explains.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parent
DEFAULT_ALLOWLIST = SCHEMA_DIR / "drift-allowlist.json"

#: Protocol version → our schema folder, relative to ``SCHEMA_DIR`` (as in the codegen table).
VERSION_FOLDERS = {"v1": "", "v2": "v2"}

# Upstream's routing unions only group the per-method definitions by direction; they say
# nothing a per-method comparison does not already say, and the project has no equivalent.
IGNORED_DEFINITION_PATTERNS: tuple[str, ...] = (
    "AgentRequest",
    "ClientRequest",
    "AgentResponse",
    "ClientResponse",
    "AgentNotification",
    "ClientNotification",
    "Ext[A-Z]*",
)

# Where a folder is compared, these sub-folders hold data that is not schema definitions.
NON_SCHEMA_DIRS = frozenset({"cases"})

# The union whose arms are the session/update kinds; its arms are reported as update kinds.
SESSION_UPDATE = "SessionUpdate"

# Marker used in place of a value when an enumeration (or a union tag) also accepts any
# other value of its type ("open" enums such as SessionConfigOptionCategory).
OTHER_VALUE = "<any other value>"

# Keys that only annotate a schema; a node made of nothing else is a pure reference wrapper.
ANNOTATION_KEYS = frozenset({"description", "title", "$comment", "examples", "default"})

CATEGORIES: tuple[str, ...] = (
    "schema_problem",
    "method_added",
    "method_removed",
    "method_changed",
    "update_kind_added",
    "update_kind_removed",
    "update_kind_changed",
    "definition_added",
    "definition_removed",
    "property_added",
    "property_removed",
    "required_changed",
    "type_changed",
    "enum_value_added",
    "enum_value_removed",
    "union_tag_changed",
    "union_arm_added",
    "union_arm_removed",
    "union_arm_changed",
    "stale_allowlist_entry",
)


class SchemaLoadError(Exception):
    """A schema set cannot be read into the model (bad reference, duplicate name, ...)."""


# --------------------------------------------------------------------------------------------
# Loading: one namespace of definitions per side
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MethodModel:
    """What a wire method is bound to: the handling side and its params/result definitions."""

    side: str | None
    params: str | None
    result: str | None


@dataclass
class SchemaSet:
    """Every definition of one side, with references rewritten to ``#/$defs/<Name>``."""

    source: str
    definitions: dict[str, dict[str, Any]]
    methods: dict[str, MethodModel]
    problems: list[str] = field(default_factory=list)


def ref_target(ref: str) -> str:
    """Return the definition name a reference points at (``a.json#/$defs/X`` → ``X``)."""
    _, _, fragment = ref.partition("#")
    prefix = "/$defs/"
    if not fragment.startswith(prefix) or "/" in fragment[len(prefix) :]:
        raise SchemaLoadError(f"reference {ref!r} does not name a definition")
    return fragment[len(prefix) :]


def _rewrite_refs(node: Any) -> Any:
    """Copy ``node`` with every ``$ref`` turned into a same-document ``#/$defs/<Name>``."""
    if isinstance(node, dict):
        return {
            key: f"#/$defs/{ref_target(value)}" if key == "$ref" else _rewrite_refs(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_refs(item) for item in node]
    return node


def _schema_files(root: Path) -> Iterator[Path]:
    # A sub-folder with its own index.json is another protocol version's schema set
    # (``schema/v2/`` inside ``schema/``), never part of this one.
    other_versions = {index.parent for index in root.glob("*/index.json")}
    for path in sorted(root.rglob("*.json")):
        folders = path.relative_to(root).parts[:-1]
        if folders and root / folders[0] in other_versions:
            continue
        if NON_SCHEMA_DIRS.isdisjoint(folders):
            yield path


def _methods_from_x_method(definitions: Mapping[str, Mapping[str, Any]]) -> dict[str, MethodModel]:
    """Bind methods the way upstream does: ``x-method`` on each params/result definition.

    A definition whose name ends in ``Response`` is the result; anything else is the params.
    Each attribute keeps every value seen, joined with ``|``: params and result should agree
    on the side, and a disagreement must show up as a change rather than be hidden; unstable
    upstream also names one method both as request and as notification (``mcp/message``).
    """
    found: dict[str, dict[str, set[str]]] = {}
    for name, schema in definitions.items():
        method = schema.get("x-method")
        if not isinstance(method, str):
            continue
        entry = found.setdefault(method, {"side": set(), "params": set(), "result": set()})
        if isinstance(schema.get("x-side"), str):
            entry["side"].add(schema["x-side"])
        entry["result" if name.endswith("Response") else "params"].add(name)

    def joined(values: set[str]) -> str | None:
        return "|".join(sorted(values)) or None

    return {
        wire: MethodModel(
            side=joined(e["side"]), params=joined(e["params"]), result=joined(e["result"])
        )
        for wire, e in found.items()
    }


def _methods_from_index(
    index: Mapping[str, Any], definitions: Mapping[str, Mapping[str, Any]], problems: list[str]
) -> dict[str, MethodModel]:
    """Bind methods from ``index.json``, checking that it agrees with ``x-method``/``x-side``.

    Disagreements (and index entries naming definitions that do not exist) are appended to
    ``problems``: they are reported as ``schema_problem`` findings and always fail the check.
    """
    methods: dict[str, MethodModel] = {}
    for wire, entry in index.get("methods", {}).items():
        model = MethodModel(
            side=entry.get("side"), params=entry.get("params"), result=entry.get("result")
        )
        methods[wire] = model
        bound_name = entry.get("aliasOf") or wire
        for role, name in (("params", model.params), ("result", model.result)):
            if name is None:
                continue
            schema = definitions.get(name)
            if schema is None:
                problems.append(f"index.json: {wire} {role} names missing definition {name}")
                continue
            if schema.get("x-method") != bound_name:
                problems.append(
                    f"index.json: {wire} {role} {name} has x-method "
                    f"{schema.get('x-method')!r}, expected {bound_name!r}"
                )
            if schema.get("x-side") != model.side:
                problems.append(
                    f"index.json: {wire} {role} {name} has x-side "
                    f"{schema.get('x-side')!r}, index says {model.side!r}"
                )
    for section, key in (("updates", "def"), ("errors", "def")):
        for entry_name, entry in index.get(section, {}).items():
            if entry.get(key) not in definitions:
                problems.append(
                    f"index.json: {section} {entry_name} names missing definition {entry.get(key)}"
                )
    for wire in _methods_from_x_method(definitions).keys() - methods.keys():
        problems.append(f"x-method {wire!r} is used by a definition but missing from index.json")
    return methods


def load_schema_set(path: Path) -> SchemaSet:
    """Read a single upstream-style file or a folder laid out like the project's ``schema/``."""
    if path.is_file():
        document = json.loads(path.read_text(encoding="utf-8"))
        single: dict[str, dict[str, Any]] = _rewrite_refs(document.get("$defs", {}))
        return SchemaSet(str(path), single, _methods_from_x_method(single))
    if not path.is_dir():
        raise SchemaLoadError(f"{path} is neither a schema file nor a folder")
    definitions: dict[str, dict[str, Any]] = {}
    origin: dict[str, Path] = {}
    problems: list[str] = []
    for file in _schema_files(path):
        document = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(document, dict) or "$defs" not in document:
            continue  # index.json, the allowlist and other non-schema data
        for name, schema in document["$defs"].items():
            if name in definitions:
                raise SchemaLoadError(
                    f"definition {name} is defined in both {origin[name]} and {file}"
                )
            origin[name] = file
            definitions[name] = _rewrite_refs(schema)
    for name, schema in definitions.items():
        for target in sorted(_refs_in(schema) - definitions.keys()):
            problems.append(f"{name} ({origin[name].relative_to(path)}) refers to missing {target}")
    index_path = path / "index.json"
    if index_path.is_file():
        index = json.loads(index_path.read_text(encoding="utf-8"))
        methods = _methods_from_index(index, definitions, problems)
    else:
        methods = _methods_from_x_method(definitions)
    return SchemaSet(str(path), definitions, methods, problems)


def _refs_in(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {ref_target(node["$ref"])} if isinstance(node.get("$ref"), str) else set()
        for value in node.values():
            found |= _refs_in(value)
        return found
    if isinstance(node, list):
        return set().union(*(_refs_in(item) for item in node)) if node else set()
    return set()


# --------------------------------------------------------------------------------------------
# Normalising: schema nodes → comparable models
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PropertyModel:
    """A property's JSON types (``@Name`` for a reference, ``null`` for nullability) and values."""

    types: frozenset[str]
    values: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ArmModel:
    """One arm of a union: the definition it extends and its own extra properties."""

    target: str | None
    properties: Mapping[str, PropertyModel]
    required: frozenset[str]


@dataclass(frozen=True)
class UnionModel:
    """A union; arms are keyed by their tag value, or ``@Target`` / shape when untagged."""

    tag: str | None
    arms: Mapping[str, ArmModel]


@dataclass(frozen=True)
class DefinitionModel:
    """Everything about a definition that the drift check compares."""

    types: frozenset[str]
    properties: Mapping[str, PropertyModel]
    required: frozenset[str]
    values: frozenset[str]
    union: UnionModel | None


def _encode(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _alternatives(node: Mapping[str, Any]) -> list[Any]:
    return list(node.get("anyOf") or node.get("oneOf") or [])


def _is_scalar_arm(arm: Any) -> bool:
    """True for an alternative that is a plain value type (``const``, ``type``), not a shape."""
    if not isinstance(arm, dict):
        return False
    if "$ref" in arm or "allOf" in arm or "properties" in arm or _alternatives(arm):
        return False
    return "type" in arm or "const" in arm or "enum" in arm


def type_terms(node: Any) -> frozenset[str]:
    """Reduce a schema node to the set of JSON types it admits, references kept by name.

    ``{"allOf": [{"$ref": X}]}``, ``{"$ref": X}`` → ``{"@X"}``; ``anyOf [ref X, null]`` and
    ``type: [.., "null"]`` both give ``null`` as a member; arrays become ``array<items>``,
    maps (``additionalProperties`` with a schema) ``object<values>``; no constraint is ``any``.
    """
    if node is True or node == {} or not isinstance(node, dict):
        return frozenset({"any"})
    if "type" in node:
        declared = node["type"] if isinstance(node["type"], list) else [node["type"]]
        return frozenset(_typed_term(node, str(kind)) for kind in declared)
    if "$ref" in node:
        return frozenset({"@" + ref_target(node["$ref"])})
    alternatives = _alternatives(node)
    if alternatives:
        return frozenset().union(*(type_terms(arm) for arm in alternatives))
    parts = node.get("allOf") or []
    if len(parts) == 1:
        return type_terms(parts[0])
    if parts:
        return frozenset({"&".join(sorted("|".join(sorted(type_terms(p))) for p in parts))})
    values = node.get("enum", [node["const"]] if "const" in node else [])
    if values:
        return frozenset(_json_type(value) for value in values)
    return frozenset({"any"})


def _typed_term(node: Mapping[str, Any], kind: str) -> str:
    if kind == "array":
        return "array<" + ",".join(sorted(type_terms(node.get("items", True)))) + ">"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return "object<" + ",".join(sorted(type_terms(node["additionalProperties"]))) + ">"
    return kind


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def value_set(node: Any) -> frozenset[str]:
    """Const/enum values a node allows, JSON-encoded; ``OTHER_VALUE`` when it is open-ended."""
    if not isinstance(node, dict):
        return frozenset()
    if "const" in node:
        return frozenset({_encode(node["const"])})
    if "enum" in node:
        return frozenset(_encode(value) for value in node["enum"])
    alternatives = _alternatives(node)
    if alternatives and all(_is_scalar_arm(arm) for arm in alternatives):
        found: set[str] = set()
        for arm in alternatives:
            arm_values = value_set(arm)
            found |= arm_values or ({OTHER_VALUE} if arm.get("type") != "null" else set())
        return frozenset(found) if found - {OTHER_VALUE} else frozenset()
    parts = node.get("allOf") or []
    if len(parts) == 1 and "$ref" not in parts[0]:
        return value_set(parts[0])
    return frozenset()


def _property_model(node: Any) -> PropertyModel:
    return PropertyModel(types=type_terms(node), values=value_set(node))


def _properties(node: Mapping[str, Any], skip: str | None = None) -> dict[str, PropertyModel]:
    return {
        name: _property_model(schema)
        for name, schema in (node.get("properties") or {}).items()
        if name != skip
    }


def _tag_const(node: Mapping[str, Any], tag: str) -> Any:
    prop = (node.get("properties") or {}).get(tag)
    return prop.get("const", ...) if isinstance(prop, dict) else ...


def _is_pure_ref(node: Mapping[str, Any]) -> bool:
    return "$ref" in node and set(node) - ANNOTATION_KEYS == {"$ref"}


def _composition_targets(node: Mapping[str, Any]) -> list[str]:
    targets = [ref_target(node["$ref"])] if "$ref" in node else []
    for part in node.get("allOf") or []:
        if isinstance(part, dict) and _is_pure_ref(part):
            targets.append(ref_target(part["$ref"]))
    return targets


def _union_tag(node: Mapping[str, Any], arms: Sequence[Mapping[str, Any]]) -> str | None:
    discriminator = node.get("discriminator")
    if isinstance(discriminator, dict) and isinstance(discriminator.get("propertyName"), str):
        return str(discriminator["propertyName"])
    counts: dict[str, int] = {}
    for arm in arms:
        for name, prop in (arm.get("properties") or {}).items():
            if isinstance(prop, dict) and "const" in prop and name in arm.get("required", []):
                counts[name] = counts.get(name, 0) + 1
    return max(counts, key=lambda name: counts[name]) if counts else None


def _unwrap_arm(
    arm: Mapping[str, Any], definitions: Mapping[str, Mapping[str, Any]]
) -> Mapping[str, Any]:
    """Inline an arm that is only a reference to a definition carrying the union's tag.

    The project keeps each ``session/update`` arm as its own definition
    (``SessionUpdateAgentMessageChunk``) and lists references to them; upstream writes the
    same arm inline. Inlining makes both look like ``{tag const} + allOf ContentChunk``.
    """
    if not _is_pure_ref(arm):
        return arm
    target = definitions.get(ref_target(arm["$ref"]))
    if target is None:
        return arm
    required = set(target.get("required", []))
    for name, prop in (target.get("properties") or {}).items():
        if isinstance(prop, dict) and "const" in prop and name in required:
            return target
    return arm


def _union_model(
    node: Mapping[str, Any], definitions: Mapping[str, Mapping[str, Any]]
) -> UnionModel | None:
    alternatives = _alternatives(node)
    if not alternatives or all(_is_scalar_arm(arm) for arm in alternatives):
        return None
    arms = [_unwrap_arm(arm, definitions) if isinstance(arm, dict) else {} for arm in alternatives]
    tag = _union_tag(node, arms)
    models: dict[str, ArmModel] = {}
    for arm in arms:
        targets = _composition_targets(arm)
        model = ArmModel(
            target=targets[0] if len(targets) == 1 else ("&".join(targets) or None),
            properties=_properties(arm, skip=tag),
            required=frozenset(arm.get("required", [])) - {tag},
        )
        models[_arm_key(arm, tag, model)] = model
    return UnionModel(tag=tag, arms=models)


def _arm_key(arm: Mapping[str, Any], tag: str | None, model: ArmModel) -> str:
    if tag is not None:
        value = _tag_const(arm, tag)
        if value is not ...:
            return str(value)
        if tag in (arm.get("properties") or {}):
            return OTHER_VALUE
    if model.target is not None:
        return "@" + model.target
    if model.properties:
        return "{" + ",".join(sorted(model.properties)) + "}"
    return "type:" + "|".join(sorted(type_terms(arm)))


def normalise_definition(
    schema: Mapping[str, Any], definitions: Mapping[str, Mapping[str, Any]]
) -> DefinitionModel:
    """Build the comparable model of one definition (``definitions`` resolves union arms)."""
    union = _union_model(schema, definitions)
    if union is not None:
        types = frozenset({"object"}) if "properties" in schema else frozenset({"union"})
    else:
        types = type_terms(schema)
    return DefinitionModel(
        types=types,
        properties=_properties(schema),
        required=frozenset(schema.get("required", [])),
        values=value_set(schema),
        union=union,
    )


def is_ignored_definition(name: str) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in IGNORED_DEFINITION_PATTERNS)


def normalise(schema_set: SchemaSet) -> dict[str, DefinitionModel]:
    """Model every compared definition of a schema set."""
    return {
        name: normalise_definition(schema, schema_set.definitions)
        for name, schema in schema_set.definitions.items()
        if not is_ignored_definition(name)
    }


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One difference: ``category`` (see CATEGORIES), what it is about, and a readable detail."""

    category: str
    subject: str
    detail: str = ""


def _terms_text(terms: Iterable[str]) -> str:
    return " | ".join(sorted(terms))


def _compare_values(subject: str, base: frozenset[str], other: frozenset[str]) -> list[Finding]:
    found = [Finding("enum_value_added", subject, value) for value in sorted(other - base)]
    found += [Finding("enum_value_removed", subject, value) for value in sorted(base - other)]
    return found


def _compare_properties(
    owner: str,
    base_props: Mapping[str, PropertyModel],
    other_props: Mapping[str, PropertyModel],
    base_required: frozenset[str],
    other_required: frozenset[str],
) -> list[Finding]:
    found: list[Finding] = []
    for name in sorted(other_props.keys() - base_props.keys()):
        required = " (required)" if name in other_required else ""
        found.append(
            Finding(
                "property_added", f"{owner}.{name}", _terms_text(other_props[name].types) + required
            )
        )
    for name in sorted(base_props.keys() - other_props.keys()):
        found.append(
            Finding("property_removed", f"{owner}.{name}", _terms_text(base_props[name].types))
        )
    for name in sorted(base_props.keys() & other_props.keys()):
        subject = f"{owner}.{name}"
        base, other = base_props[name], other_props[name]
        if base.types != other.types:
            found.append(
                Finding(
                    "type_changed",
                    subject,
                    f"{_terms_text(base.types)} -> {_terms_text(other.types)}",
                )
            )
        found += _compare_values(subject, base.values, other.values)
        if (name in base_required) != (name in other_required):
            now = "required" if name in other_required else "optional"
            found.append(Finding("required_changed", subject, f"now {now}"))
    return found


def _compare_unions(
    name: str, base: UnionModel | None, other: UnionModel | None, *, kinds: bool
) -> list[Finding]:
    """Compare union arms; for ``SessionUpdate`` (``kinds``) arms are reported as update kinds."""
    if base is None and other is None:
        return []
    if base is None or other is None:
        state = "is now a union" if other is not None else "is no longer a union"
        return [Finding("type_changed", name, state)]
    found: list[Finding] = []
    if base.tag != other.tag:
        found.append(Finding("union_tag_changed", name, f"{base.tag} -> {other.tag}"))
    prefix = "update_kind" if kinds else "union_arm"
    subject = (lambda key: key) if kinds else (lambda key: f"{name}[{key}]")
    for key in sorted(other.arms.keys() - base.arms.keys()):
        target = other.arms[key].target
        found.append(Finding(f"{prefix}_added", subject(key), f"-> {target}" if target else ""))
    for key in sorted(base.arms.keys() - other.arms.keys()):
        target = base.arms[key].target
        found.append(Finding(f"{prefix}_removed", subject(key), f"-> {target}" if target else ""))
    for key in sorted(base.arms.keys() & other.arms.keys()):
        base_arm, other_arm = base.arms[key], other.arms[key]
        if base_arm.target != other_arm.target:
            found.append(
                Finding(
                    f"{prefix}_changed",
                    subject(key),
                    f"extends {base_arm.target} -> {other_arm.target}",
                )
            )
        arm_owner = key if kinds else f"{name}[{key}]"
        found += _compare_properties(
            arm_owner,
            base_arm.properties,
            other_arm.properties,
            base_arm.required,
            other_arm.required,
        )
    return found


def compare_definitions(name: str, base: DefinitionModel, other: DefinitionModel) -> list[Finding]:
    """All differences between two models of the definition ``name``."""
    found: list[Finding] = []
    if base.types != other.types:
        found.append(
            Finding(
                "type_changed", name, f"{_terms_text(base.types)} -> {_terms_text(other.types)}"
            )
        )
    found += _compare_values(name, base.values, other.values)
    found += _compare_properties(
        name, base.properties, other.properties, base.required, other.required
    )
    found += _compare_unions(name, base.union, other.union, kinds=name == SESSION_UPDATE)
    return found


def compare_methods(
    base: Mapping[str, MethodModel], other: Mapping[str, MethodModel]
) -> list[Finding]:
    found: list[Finding] = []
    for wire in sorted(other.keys() - base.keys()):
        method = other[wire]
        found.append(
            Finding("method_added", wire, f"{method.side}: {method.params} -> {method.result}")
        )
    for wire in sorted(base.keys() - other.keys()):
        found.append(Finding("method_removed", wire, ""))
    for wire in sorted(base.keys() & other.keys()):
        for attribute in ("side", "params", "result"):
            was, now = getattr(base[wire], attribute), getattr(other[wire], attribute)
            if was != now:
                found.append(Finding("method_changed", wire, f"{attribute}: {was} -> {now}"))
    return found


def compare(baseline: SchemaSet, compared: SchemaSet) -> list[Finding]:
    """Every difference from ``baseline`` to ``compared``, including either side's problems."""
    found = [Finding("schema_problem", baseline.source, p) for p in baseline.problems]
    found += [Finding("schema_problem", compared.source, p) for p in compared.problems]
    found += compare_methods(baseline.methods, compared.methods)
    base_models, other_models = normalise(baseline), normalise(compared)
    for name in sorted(other_models.keys() - base_models.keys()):
        found.append(Finding("definition_added", name, ""))
    for name in sorted(base_models.keys() - other_models.keys()):
        found.append(Finding("definition_removed", name, ""))
    for name in sorted(base_models.keys() & other_models.keys()):
        found += compare_definitions(name, base_models[name], other_models[name])
    if SESSION_UPDATE not in base_models.keys() & other_models.keys():
        found.append(
            Finding(
                "schema_problem", SESSION_UPDATE, "missing on one side; update kinds not compared"
            )
        )
    return found


# --------------------------------------------------------------------------------------------
# Allowlist and report
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AllowlistEntry:
    """An expected difference. ``subject`` may use shell wildcards (``*ErrorObject``)."""

    category: str
    subject: str
    reason: str

    def matches(self, finding: Finding) -> bool:
        return self.category == finding.category and fnmatchcase(finding.subject, self.subject)


def load_allowlist(path: Path) -> list[AllowlistEntry]:
    document = json.loads(path.read_text(encoding="utf-8"))
    entries = []
    for raw in document.get("entries", []):
        if raw.get("category") not in CATEGORIES or not raw.get("subject") or not raw.get("reason"):
            raise SchemaLoadError(
                f"{path}: entry {raw!r} needs a known category, a subject and a reason"
            )
        entries.append(AllowlistEntry(raw["category"], raw["subject"], raw["reason"]))
    return entries


#: How the text report groups categories, read from ``--ours``' point of view.
DIRECTIONS: tuple[tuple[str, str], ...] = (
    ("Upstream has, we lack", "_removed"),
    ("We have, upstream lacks", "_added"),
    ("Both have, shapes differ", ""),
)


def direction_of(category: str) -> str:
    for title, suffix in DIRECTIONS[:2]:
        if category.endswith(suffix):
            return title
    return DIRECTIONS[2][0]


@dataclass
class DriftReport:
    baseline: str
    compared: str
    differences: list[Finding]
    allowed: list[tuple[Finding, AllowlistEntry]]
    stale: list[AllowlistEntry]
    #: (category, subject) → lines describing the baseline's shape of what the other lacks.
    shapes: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.differences and not self.stale

    def lacking(self, category: str) -> list[Finding]:
        """Differences of one ``*_removed`` category: what the baseline has and ours lacks."""
        return [f for f in self.differences if f.category == category]

    def to_json(self) -> dict[str, Any]:
        def with_shape(finding: Finding) -> dict[str, Any]:
            shape = self.shapes.get((finding.category, finding.subject))
            return asdict(finding) | ({"shape": shape} if shape else {})

        return {
            "baseline": self.baseline,
            "compared": self.compared,
            "ok": self.ok,
            "differences": [with_shape(f) for f in self.differences],
            "allowed": [asdict(f) | {"reason": e.reason} for f, e in self.allowed],
            "stale_allowlist_entries": [asdict(e) for e in self.stale],
        }

    def to_text(self) -> str:
        lines = [f"upstream (baseline): {self.baseline}", f"ours (compared):     {self.compared}"]
        if not self.differences:
            lines.append("No differences beyond the allowlist.")
        for title, _ in DIRECTIONS:
            members = [f for f in self.differences if direction_of(f.category) == title]
            lines += _grouped(title, members, self.shapes)
        if self.stale:
            lines.append("")
            lines.append("Stale allowlist entries (they match no difference; remove them):")
            lines += [f"  {e.category} {e.subject}  ({e.reason})" for e in self.stale]
        if self.allowed:
            lines.append("")
            lines.append(f"Allowed by the allowlist ({len(self.allowed)}):")
            for category in CATEGORIES:
                members_allowed = [(f, e) for f, e in self.allowed if f.category == category]
                if members_allowed:
                    lines.append(f"  {category} ({len(members_allowed)}):")
                    lines += [f"    {f.subject}  [{e.subject}]" for f, e in members_allowed]
        if any(f.category in SCAFFOLDED for f in self.differences):
            lines.append("")
            lines.append(
                "`--scaffold` writes the skeleton of the methods and update kinds listed under "
                "'Upstream has, we lack'."
            )
        return "\n".join(lines)


def _grouped(
    title: str,
    findings: Sequence[Finding],
    shapes: Mapping[tuple[str, str], list[str]] | None = None,
) -> list[str]:
    if not findings:
        return []
    lines = ["", f"{title} ({len(findings)}):"]
    for category in CATEGORIES:
        members = [f for f in findings if f.category == category]
        if members:
            lines.append(f"  {category} ({len(members)}):")
            for f in members:
                lines.append(f"    {f.subject}" + (f"  {f.detail}" if f.detail else ""))
                lines += [
                    f"        {line}" for line in (shapes or {}).get((f.category, f.subject), [])
                ]
    return lines


def apply_allowlist(
    baseline: str, compared: str, findings: Sequence[Finding], allowlist: Sequence[AllowlistEntry]
) -> DriftReport:
    differences: list[Finding] = []
    allowed: list[tuple[Finding, AllowlistEntry]] = []
    used: set[int] = set()
    for finding in findings:
        entry_index = next((i for i, e in enumerate(allowlist) if e.matches(finding)), None)
        if entry_index is None:
            differences.append(finding)
        else:
            used.add(entry_index)
            allowed.append((finding, allowlist[entry_index]))
    stale = [entry for i, entry in enumerate(allowlist) if i not in used]
    return DriftReport(baseline, compared, differences, allowed, stale)


def check(upstream: Path, ours: Path, allowlist: Path | None = None) -> DriftReport:
    """Run the whole drift check and return its report (``report.ok`` is the verdict)."""
    entries = load_allowlist(allowlist) if allowlist is not None else []
    baseline, compared = load_schema_set(upstream), load_schema_set(ours)
    report = apply_allowlist(baseline.source, compared.source, compare(baseline, compared), entries)
    report.shapes = lacking_shapes(report.differences, baseline)
    return report


# --------------------------------------------------------------------------------------------
# Shapes of what the compared side lacks
# --------------------------------------------------------------------------------------------

#: Categories ``--scaffold`` writes skeletons for.
SCAFFOLDED = ("method_removed", "update_kind_removed")


def lacking_shapes(
    findings: Sequence[Finding], baseline: SchemaSet
) -> dict[tuple[str, str], list[str]]:
    """Field shapes (from the baseline) of the methods, update kinds and definitions we lack."""
    shapes: dict[tuple[str, str], list[str]] = {}
    definitions = baseline.definitions
    for finding in findings:
        key = (finding.category, finding.subject)
        if finding.category == "method_removed" and finding.subject in baseline.methods:
            method = baseline.methods[finding.subject]
            lines = [f"handled by: {method.side}"]
            for role, name in (("params", method.params), ("result", method.result)):
                if name in definitions:
                    lines.append(f"{role} {name}:")
                    lines += ["  " + line for line in describe_definition(name, definitions)]
            shapes[key] = lines
        elif finding.category == "update_kind_removed":
            target = finding.detail.removeprefix("-> ").strip()
            if target in definitions:
                shapes[key] = [f"{target}:"] + [
                    "  " + line for line in describe_definition(target, definitions)
                ]
        elif finding.category == "definition_removed" and finding.subject in definitions:
            shapes[key] = describe_definition(finding.subject, definitions)
    return shapes


def describe_definition(name: str, definitions: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per field (``name: types, required, values``), or the union's arms."""
    model = normalise_definition(definitions[name], definitions)
    lines = [
        _property_line(prop, shape, prop in model.required)
        for prop, shape in sorted(model.properties.items())
    ]
    if model.union is not None:
        tag = f" (tag {model.union.tag})" if model.union.tag else ""
        lines.append(f"one of{tag}:")
        for key, arm in model.union.arms.items():
            extends = f" extends {arm.target}" if arm.target else ""
            fields = ", ".join(
                _property_line(prop, shape, prop in arm.required)
                for prop, shape in sorted(arm.properties.items())
            )
            lines.append(f"  {key}{extends}" + (f" {{{fields}}}" if fields else ""))
    elif model.values:
        lines.append("values: " + ", ".join(sorted(model.values)))
    elif not model.properties:
        lines.append("type: " + _terms_text(model.types))
    return lines


def _property_line(name: str, shape: PropertyModel, required: bool) -> str:
    text = f"{name}: {_terms_text(shape.types)}"
    if shape.values:
        text += " in {" + ", ".join(sorted(shape.values)) + "}"
    return text + (" (required)" if required else "")


HELP = """\
Compare our schema folder with an upstream ACP schema file.

Direction: --upstream is the baseline, --ours the compared side (default: the project's
schema folder of --version). The report lists what UPSTREAM HAS AND WE LACK first (with the
field shapes to write), then what we have and upstream lacks, then shapes that differ.
Expected differences live in the version's drift-allowlist.json, each with a reason.

Exit codes: 0 no differences beyond the allowlist, 1 differences or stale allowlist entries,
2 unreadable input.
"""


def main(argv: Sequence[str] | None = None) -> int:
    from acp_schema import reference

    parser = argparse.ArgumentParser(
        prog="python -m acp_schema.drift",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        choices=sorted(VERSION_FOLDERS),
        default="v1",
        help="protocol version: picks our folder, the allowlist and the default upstream",
    )
    parser.add_argument(
        "--upstream",
        type=Path,
        default=None,
        help="baseline: an upstream schema.json (default: the newest upstream of --version, "
        "named once in acp_schema.reference.NEWEST_UPSTREAM)",
    )
    parser.add_argument(
        "--ours",
        type=Path,
        default=None,
        help="compared side: a schema folder or a single file (default: the project's folder)",
    )
    parser.add_argument(
        "--allowlist",
        type=Path,
        default=None,
        help="expected differences (default: the version's list when --ours is not given)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--scaffold",
        action="store_true",
        help="write the skeleton of every method and update kind upstream has and we lack "
        "into the --ours folder (schema files with TODO descriptions, index entries, case "
        "stubs); then run `python -m acp_schema.codegen` and `pytest`, which name the TODOs",
    )
    args = parser.parse_args(argv)
    default_ours = SCHEMA_DIR / VERSION_FOLDERS[args.version]
    ours = args.ours if args.ours is not None else default_ours
    upstream = args.upstream or reference.newest_upstream(args.version)
    allowlist = args.allowlist
    default_allowlist = default_ours / DEFAULT_ALLOWLIST.name
    if allowlist is None and args.ours is None and default_allowlist.is_file():
        allowlist = default_allowlist
    try:
        report = check(upstream, ours, allowlist)
    except (SchemaLoadError, OSError, json.JSONDecodeError) as error:
        print(f"drift: {error}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_json(), indent=2) if args.json else report.to_text())
    if args.scaffold:
        from acp_schema import scaffold

        if not ours.is_dir():
            print("drift: --scaffold needs --ours to be a schema folder", file=sys.stderr)
            return 2
        result = scaffold.write_scaffold(report, load_schema_set(upstream), ours)
        print("")
        configured = reference.newest_upstream(args.version)
        is_newest = upstream.resolve() == configured.resolve()
        setting = None if is_newest else f"NEWEST_UPSTREAM[{args.version!r}] in schema/reference.py"
        print(scaffold.summary(result, ours, setting))
        return 0
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
