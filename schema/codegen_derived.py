"""Schema parts derived from ``index.json``, kept in sync by ``python -m acp_schema.codegen``.

The ``session/update`` union lists one arm per update kind. The index already binds each
kind to its file and definition, so the arms are written from it (in index order) instead of
by hand: adding a kind is an index entry plus the arm's own file. When the union is open (a
catch-all arm whose ``not`` lists the known tags), that list is rewritten from the index too.
``--check`` reports a union that no longer matches the index like any stale generated file.
"""

from __future__ import annotations

import copy
import json
import posixpath
from pathlib import Path
from typing import Any

from acp_schema.codegen_common import load_index

UPDATE_METHOD = "session/update"
UNION_NAME = "SessionUpdate"
TAG = "sessionUpdate"


def render_json(document: Any) -> str:
    """The one JSON layout of schema files: two-space indent, UTF-8, final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def derived_files(schema_dir: Path) -> dict[str, str]:
    """Schema-relative path → the content derived parts give it (only files with such parts)."""
    index = load_index(schema_dir)
    method = index.get("methods", {}).get(UPDATE_METHOD)
    if method is None or not index.get("updates"):
        return {}
    relpath = method["file"]
    document = json.loads((schema_dir / relpath).read_text(encoding="utf-8"))
    union = document.get("$defs", {}).get(UNION_NAME)
    if union is None:
        raise ValueError(f"{relpath} has no {UNION_NAME} definition to derive")
    document["$defs"][UNION_NAME] = derive_union(union, relpath, index["updates"])
    return {relpath: render_json(document)}


def derive_union(union: dict[str, Any], relpath: str, updates: dict[str, Any]) -> dict[str, Any]:
    """``union`` with one ``$ref`` arm per index entry, then its own catch-all arms."""
    keyword = "anyOf" if "anyOf" in union else "oneOf"
    here = posixpath.dirname(relpath)
    arms: list[Any] = [
        {"$ref": f"{posixpath.relpath(entry['file'], here)}#/$defs/{entry['def']}"}
        for entry in updates.values()
    ]
    for arm in union.get(keyword, []):
        if not isinstance(arm, dict) or "$ref" in arm:
            continue
        tag = (arm.get("properties") or {}).get(TAG)
        if isinstance(tag, dict) and "const" in tag:
            raise ValueError(
                f"{relpath}: {UNION_NAME} has an inline arm for {tag['const']!r}; give it its "
                "own file under updates/ and an index.json entry (the union is derived)"
            )
        arms.append(_with_known_tags(arm, list(updates)))
    derived = dict(union)
    derived[keyword] = arms
    return derived


def _with_known_tags(arm: dict[str, Any], kinds: list[str]) -> dict[str, Any]:
    excluded = arm.get("not")
    if not isinstance(excluded, dict) or not isinstance(excluded.get("anyOf"), list):
        return arm
    template = next(
        (a for a in excluded["anyOf"] if isinstance(a, dict) and TAG in a.get("properties", {})),
        None,
    )
    if template is None:
        return arm
    rewritten = copy.deepcopy(arm)
    template_kind = template["properties"][TAG].get("const")
    tags = []
    for kind in kinds:
        tag_arm = copy.deepcopy(template)
        tag = tag_arm["properties"][TAG]
        tag["const"] = kind
        # A description that names the template's tag ("Tag value `plan` …") names this one.
        if isinstance(tag.get("description"), str) and isinstance(template_kind, str):
            tag["description"] = tag["description"].replace(f"`{template_kind}`", f"`{kind}`")
        tags.append(tag_arm)
    rewritten["not"]["anyOf"] = tags
    return rewritten


def stale_derived(schema_dir: Path) -> dict[str, tuple[str, str]]:
    """Derived files whose content differs: relpath → (on disk, derived)."""
    stale = {}
    for relpath, text in derived_files(schema_dir).items():
        current = (schema_dir / relpath).read_text(encoding="utf-8")
        if current != text:
            stale[relpath] = (current, text)
    return stale


def write_derived(schema_dir: Path) -> list[str]:
    """Rewrite stale derived files; return their paths."""
    stale = stale_derived(schema_dir)
    for relpath, (_, text) in stale.items():
        (schema_dir / relpath).write_text(text, encoding="utf-8", newline="\n")
    return sorted(stale)
