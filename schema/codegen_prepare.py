"""Prepares the copy of ``schema/`` that datamodel-code-generator reads.

The generator names an inline ``anyOf``/``oneOf`` branch ``Parent1``, ``Parent2``... unless it
can find a tag; names by position silently change meaning when branches are reordered. We
therefore give every anonymous branch an explicit, content-derived ``title`` and run the
generator with ``use-title-as-name``:

- a branch whose properties fix a string tag (``"const": "form"``) → ``Parent`` + ``Form``;
- otherwise a branch with its own ``title`` (``"Session"``) → ``Parent`` + ``Session``;
- otherwise a branch that is just ``allOf: [{$ref: .../X}]`` → ``Parent`` + ``X``;
- when that name is already a definition (the ``http`` arm of ``McpServer`` wraps the
  definition ``McpServerHttp``), ``Variant`` is appended: ``McpServerHttpVariant``.

In a pure union (no properties of its own beside the ``anyOf``), a branch that only wraps a
reference (``{"title": "stdio", "allOf": [{"$ref": ...}]}``) is replaced by the reference
itself, so the union uses the referenced class directly instead of an empty subclass. (When
the parent has properties, the branch is a mixin and keeps its name: ``…UrlModeSession``.)

All other titles are removed (definitions are named by their ``$defs`` key), so class names
are exactly the schema's definition names plus these branch names. ``schema/`` itself is
never modified.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_WORD = re.compile(r"[A-Za-z0-9]+")


@dataclass
class BranchNames:
    """What the preparation named: used later to name and place derived classes."""

    #: branch class name → the suffix appended to its parent (``ElicitationUrlModeSession``
    #: → ``Session``).
    suffix: dict[str, str] = field(default_factory=dict)
    #: branch class name → schema file (relative) whose definition contains the branch.
    owner: dict[str, str] = field(default_factory=dict)
    #: every ``$defs`` name → schema file (relative) that declares it.
    declared: dict[str, str] = field(default_factory=dict)
    #: every ``$defs`` name of every file, known before any branch is named.
    all_definitions: frozenset[str] = frozenset()
    #: catch-all branch of an open union → (tag property, the known tag values it must
    #: refuse). The schema says so with ``not: {anyOf: [{tag: const}...]}``, which the
    #: generator ignores; post-processing turns it into a validator.
    open_tags: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    #: branch class name → the one definition it extends (``allOf: [{$ref: …/X}]`` → ``X``),
    #: used to rebuild arms the generator loses when ``X`` is itself a union of unions.
    extends: dict[str, str] = field(default_factory=dict)


def camel(text: str) -> str:
    """``agent_message_chunk`` → ``AgentMessageChunk``; ``other`` → ``Other``."""
    return "".join(word[:1].upper() + word[1:] for word in _WORD.findall(text))


def _branch_suffix(branch: dict[str, Any]) -> str | None:
    for prop in (branch.get("properties") or {}).values():
        if isinstance(prop, dict) and isinstance(prop.get("const"), str):
            return camel(prop["const"])
    title = branch.get("title")
    if isinstance(title, str) and camel(title):
        return camel(title)
    refs = [part["$ref"] for part in branch.get("allOf", []) if isinstance(part, dict)]
    if len(refs) == 1 and isinstance(refs[0], str):
        return refs[0].rsplit("/", 1)[-1]
    return None


def _retitle(node: Any, parent: str | None, relpath: str, names: BranchNames) -> Any:
    """Copy of ``node`` without titles, except the branch titles we assign.

    ``parent`` is the class name that branches directly under ``node`` are prefixed with, or
    None when ``node`` is not a schema that names its branches (e.g. a property's schema).
    """
    if isinstance(node, list):
        return [_retitle(item, None, relpath, names) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in ("anyOf", "oneOf") and isinstance(value, list) and parent is not None:
            collapse = "properties" not in node  # a pure union, not properties mixed with a union
            out[key] = [
                _retitle_branch(item, parent, relpath, names, collapse=collapse) for item in value
            ]
        elif key in ("properties", "patternProperties", "$defs") and isinstance(value, dict):
            out[key] = {k: _retitle(v, None, relpath, names) for k, v in value.items()}
        else:
            out[key] = _retitle(value, None, relpath, names)
    return out


#: Keys that only annotate a schema; a branch with nothing else but ``allOf: [$ref]`` is the
#: referenced schema.
_ANNOTATIONS = {"title", "description", "$comment", "examples"}


def _bare_reference(branch: dict[str, Any]) -> str | None:
    parts = branch.get("allOf")
    if set(branch) - _ANNOTATIONS != {"allOf"} or not isinstance(parts, list) or len(parts) != 1:
        return None
    only = parts[0]
    if isinstance(only, dict) and set(only) == {"$ref"} and isinstance(only["$ref"], str):
        return only["$ref"]
    return None


#: Array constraints that make the generator emit a named alias for an array branch.
_NAMED_ARRAY_KEYS = ("minItems", "maxItems", "uniqueItems")


def _becomes_class(branch: dict[str, Any]) -> bool:
    """Branches the generator names: object shapes, and arrays carrying constraints (a
    numbered ``Annotated`` alias otherwise). Scalar ones (``null``, a const) stay inline."""
    kinds = branch.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "array" in kinds and any(key in branch for key in _NAMED_ARRAY_KEYS):
        return True
    return "object" in kinds or any(
        key in branch for key in ("properties", "allOf", "anyOf", "oneOf")
    )


def _retitle_branch(
    branch: Any, parent: str, relpath: str, names: BranchNames, *, collapse: bool
) -> Any:
    if not isinstance(branch, dict) or "$ref" in branch:
        return _retitle(branch, None, relpath, names)
    reference = _bare_reference(branch) if collapse else None
    if reference is not None:
        return {"$ref": reference}
    suffix = _branch_suffix(branch) if _becomes_class(branch) else None
    if suffix is None:
        return _retitle(branch, parent, relpath, names)
    name = parent + suffix
    if name in names.all_definitions:
        suffix += "Variant"
        name += "Variant"
    titled = _retitle(branch, name, relpath, names)
    titled["title"] = name
    refused = _refused_tags(branch)
    if refused is not None:
        names.open_tags[name] = refused
    names.suffix[name] = suffix
    names.owner.setdefault(name, relpath)
    extended = _extended_definition(branch)
    if extended is not None:
        names.extends[name] = extended
    return titled


def _extended_definition(branch: dict[str, Any]) -> str | None:
    refs = [part.get("$ref") for part in branch.get("allOf", []) if isinstance(part, dict)]
    if len(refs) == 1 and isinstance(refs[0], str):
        return refs[0].rsplit("/", 1)[-1]
    return None


def _refused_tags(branch: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """``(tag, values)`` when ``branch`` is a catch-all that excludes known tag values.

    The shape is ``"not": {"anyOf": [{"properties": {TAG: {"const": V}}}, ...]}`` with one
    tag property throughout; anything else returns None (not an open-union catch-all).
    """
    excluded = branch.get("not")
    arms = excluded.get("anyOf") if isinstance(excluded, dict) else None
    if not isinstance(arms, list) or not arms:
        return None
    tags: set[str] = set()
    values: list[str] = []
    for arm in arms:
        properties = arm.get("properties") if isinstance(arm, dict) else None
        if not isinstance(properties, dict) or len(properties) != 1:
            return None
        ((tag, schema),) = properties.items()
        if not isinstance(schema, dict) or not isinstance(schema.get("const"), str):
            return None
        tags.add(tag)
        values.append(schema["const"])
    if len(tags) != 1:
        return None
    return tags.pop(), tuple(values)


def prepare_document(document: dict[str, Any], relpath: str, names: BranchNames) -> dict[str, Any]:
    """The generator's view of one schema document (see module docstring)."""
    prepared = {key: copy.deepcopy(value) for key, value in document.items() if key != "$defs"}
    prepared.pop("title", None)
    definitions: dict[str, Any] = {}
    for def_name, schema in document.get("$defs", {}).items():
        names.declared[def_name] = relpath
        definitions[def_name] = _retitle(schema, def_name, relpath, names)
        # A definition that is itself an arm (``SessionUpdateStateUpdate``: a tag plus
        # ``allOf`` the ``StateUpdate`` union) extends that union like an inline branch does.
        extended = _extended_definition(schema) if isinstance(schema, dict) else None
        if extended is not None and "properties" in schema:
            names.extends.setdefault(def_name, extended)
    prepared["$defs"] = definitions
    return prepared


def prepare_inputs(schema_dir: Path, relpaths: list[str], target: Path) -> BranchNames:
    """Write the prepared copy of every schema file under ``target``; return the names used."""
    documents = {
        relpath: json.loads((schema_dir / relpath).read_text(encoding="utf-8"))
        for relpath in relpaths
    }
    every_name = {name for doc in documents.values() for name in doc.get("$defs", {})}
    names = BranchNames(all_definitions=frozenset(every_name))
    for relpath, document in documents.items():
        out = target / relpath
        out.parent.mkdir(parents=True, exist_ok=True)
        prepared = prepare_document(document, relpath, names)
        out.write_text(json.dumps(prepared, indent=1, sort_keys=False), encoding="utf-8")
    clashes = sorted(set(names.suffix) & set(names.declared))
    if clashes:
        raise ValueError(f"branch names clash with schema definitions: {', '.join(clashes)}")
    return names
