"""Consistency rules for ``index.json`` that need the schema definitions.

``objectCapability`` marks a method gated per object rather than by the handler's advertised
capabilities: ``"ToolCallUpdate.capabilities.cancel"`` says ``tool_call/cancel`` may be called
for a tool call whose latest update carried ``capabilities.cancel``. The checker uses it to
tell a stable method the agent left unimplemented (a failure) from one no object has offered
(not applicable). This module checks that each such path names a real property.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp_schema.drift import load_schema_set, ref_target


def object_capability_problems(schema_dir: Path) -> list[str]:
    """One message per ``objectCapability`` whose definition or property path does not exist."""
    index = json.loads((schema_dir / "index.json").read_text(encoding="utf-8"))
    definitions = load_schema_set(schema_dir).definitions
    problems = []
    for wire, entry in index.get("methods", {}).items():
        path = entry.get("objectCapability")
        if path is None:
            continue
        if not isinstance(path, str) or "." not in path:
            problems.append(f"{wire}: objectCapability {path!r} is not 'Definition.dotted.path'")
            continue
        definition, *segments = path.split(".")
        if definition not in definitions:
            problems.append(f"{wire}: objectCapability names missing definition {definition}")
        elif property_at(definitions[definition], segments, definitions) is None:
            problems.append(f"{wire}: {definition} has no property {'.'.join(segments)}")
    return problems


def property_at(
    node: Mapping[str, Any], segments: list[str], definitions: Mapping[str, Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The schema of the property at ``segments`` below ``node``, following refs and unions."""
    if not segments:
        return node
    for candidate in _alternatives_of(node, definitions, depth=0):
        found = (candidate.get("properties") or {}).get(segments[0])
        if isinstance(found, dict):
            deeper = property_at(found, segments[1:], definitions)
            if deeper is not None:
                return deeper
    return None


def _alternatives_of(
    node: Mapping[str, Any], definitions: Mapping[str, Mapping[str, Any]], depth: int
) -> list[Mapping[str, Any]]:
    """``node`` and every schema it is made of (``$ref``, ``allOf``, ``anyOf``, ``oneOf``)."""
    if depth > 16:
        return []
    found = [node]
    if isinstance(node.get("$ref"), str):
        target = definitions.get(ref_target(node["$ref"]))
        if target is not None:
            found += _alternatives_of(target, definitions, depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        for part in node.get(key) or []:
            if isinstance(part, dict):
                found += _alternatives_of(part, definitions, depth + 1)
    return found
