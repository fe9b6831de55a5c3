"""Skeletons for what upstream has and we lack: ``python -m acp_schema.drift --scaffold``.

For every method and ``session/update`` kind the drift report lists under "upstream has, we
lack", this writes what can be derived and marks what cannot:

- the schema file (``methods/<wire>.json``, ``notifications/<wire>.json`` or
  ``updates/<kind>.json``) with upstream's *shapes* — properties, types, required fields,
  values, references — and every description replaced by a ``TODO`` (our schemas are in our
  own words, so prose is never copied); definitions it needs that we lack go in the same file;
- the ``index.json`` entry (the ``session/update`` union is then derived from the index);
- a case file with one valid and one invalid stub whose descriptions are ``TODO``s.

:func:`todos` lists every ``TODO`` left in a schema folder; the test suite fails on them, so
after ``--scaffold`` and ``python -m acp_schema.codegen`` the next ``pytest`` names exactly
the descriptions and cases a human has to write.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_schema.codegen_derived import render_json, write_derived

if TYPE_CHECKING:
    from acp_schema.drift import DriftReport, SchemaSet

TODO = "TODO"
SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FOLDERS = ("defs", "methods", "notifications", "updates", "errors", "extensions")
#: Keys dropped from upstream nodes: prose (rewritten by a human) and vendor hints we don't use.
#: Titles stay: on union arms they are short names ("other") the code generator names classes by.
PROSE_KEYS = frozenset({"description", "examples", "$comment"})
KEPT_VENDOR_KEYS = frozenset({"x-method", "x-side"})
SIDES = ("agent", "client", "protocol")


def schema_relpath(wire: str, kind: str) -> str:
    """``session/new`` → ``methods/session.new.json``; ``$/x`` → ``…/protocol.x.json``."""
    stem = ("protocol/" + wire[2:] if wire.startswith("$/") else wire).replace("/", ".")
    folder = "methods" if kind == "request" else "notifications"
    return f"{folder}/{stem}.json"


def camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in text.replace("-", "_").split("_"))


class _Writer:
    """Collects the documents of one scaffold run before anything is written."""

    def __init__(self, upstream: SchemaSet, ours: Path) -> None:
        self.upstream = upstream.definitions
        self.upstream_methods = upstream.methods
        self.ours_defs = _definition_files(ours)
        self.documents: dict[str, dict[str, Any]] = {}
        self.placed: dict[str, str] = {}  # definition written by this run → its file
        self.skipped: list[str] = []

    # -- definitions --------------------------------------------------------------------

    def place(self, names: list[str], relpath: str, title: str) -> None:
        """Put ``names`` and every upstream definition they need that we lack in ``relpath``."""
        pending = [n for n in names if n not in self.ours_defs and n not in self.placed]
        while pending:
            name = pending.pop(0)
            if name in self.placed:
                continue
            self.placed[name] = relpath
            for target in sorted(_refs(self.upstream[name])):
                if target not in self.ours_defs and target not in self.placed:
                    pending.append(target)
        document = self.document(relpath, title)
        for name, file in self.placed.items():
            if file == relpath and name not in document["$defs"]:
                document["$defs"][name] = self.skeleton(
                    self.upstream[name], relpath, name, describe=True
                )

    def document(self, relpath: str, title: str) -> dict[str, Any]:
        return self.documents.setdefault(
            relpath,
            {
                "$schema": SCHEMA_DRAFT,
                "title": title,
                "description": f"{TODO}: describe this file in our own words.",
                "$defs": {},
            },
        )

    def skeleton(self, node: Any, relpath: str, owner: str, *, describe: bool = False) -> Any:
        """Upstream's shape of ``node`` with our references and TODO descriptions.

        Definitions and properties (``describe``) get a TODO description; upstream's prose
        is dropped everywhere.
        """
        if isinstance(node, list):
            return [self.skeleton(item, relpath, owner) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        if describe:
            out["description"] = f"{TODO}: describe {owner} in our own words."
        for key, value in node.items():
            if key in PROSE_KEYS or (key.startswith("x-") and key not in KEPT_VENDOR_KEYS):
                continue
            if key == "$ref":
                out[key] = self.reference(value.rsplit("/", 1)[-1], relpath)
            elif key == "properties" and isinstance(value, dict):
                out[key] = {
                    prop: self.skeleton(schema, relpath, f"{owner}.{prop}", describe=True)
                    for prop, schema in value.items()
                }
            else:
                out[key] = self.skeleton(value, relpath, owner)
        return out

    def reference(self, name: str, relpath: str) -> str:
        target = self.ours_defs.get(name) or self.placed.get(name)
        if target is None:
            raise KeyError(f"upstream definition {name} has no place")
        if target == relpath:
            return f"#/$defs/{name}"
        return f"{posixpath.relpath(target, posixpath.dirname(relpath))}#/$defs/{name}"

    # -- cases --------------------------------------------------------------------------

    def cases(self, relpath: str, stubs: list[dict[str, Any]]) -> None:
        self.documents["cases/" + relpath] = {"$cases": stubs}


@dataclass
class ScaffoldResult:
    """Files written (relative to the schema folder) and what was left for a human."""

    written: list[str]
    skipped: list[str]


def write_scaffold(report: DriftReport, upstream: SchemaSet, ours: Path) -> ScaffoldResult:
    """Write the skeletons for ``report``'s lacking methods and update kinds."""
    writer = _Writer(upstream, ours)
    index_path = ours / "index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    for finding in report.lacking("method_removed"):
        _scaffold_method(writer, index, finding.subject)
    for finding in report.lacking("update_kind_removed"):
        _scaffold_update(writer, index, finding.subject, finding.detail.removeprefix("-> "))
    written = []
    for relpath, document in sorted(writer.documents.items()):
        target = ours / relpath
        if target.exists():
            writer.skipped.append(f"{relpath} exists; left unchanged")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        content = document.get("$cases", document)
        target.write_text(render_json(content), encoding="utf-8")
        written.append(relpath)
    if written:
        index_path.write_text(render_json(index), encoding="utf-8")
        written.append("index.json")
        written += write_derived(ours)
    return ScaffoldResult(written, writer.skipped)


def _scaffold_method(writer: _Writer, index: dict[str, Any], wire: str) -> None:
    found = _upstream_method(writer, wire)
    if found is None:
        return
    side, params, result = found
    kind = "request" if result else "notification"
    relpath = schema_relpath(wire, kind)
    writer.place([name for name in (params, result) if name], relpath, wire)
    index["methods"][wire] = {
        "kind": kind,
        "side": side,
        "file": relpath,
        "params": params,
        "result": result,
        "capability": None,
        "stability": "stable",
        "aliasOf": None,
    }
    envelope: dict[str, Any] = {"jsonrpc": "2.0"}
    if kind == "request":
        envelope["id"] = 1
    valid = envelope | {"method": wire, "params": example(params, writer.upstream)}
    invalid = envelope | {"method": wire, "params": f"{TODO}: params that break one rule"}
    stubs = _stubs(wire, valid, invalid)
    if result is not None:
        answer = {"jsonrpc": "2.0", "id": 1}
        stubs += _stubs(
            wire,
            answer | {"result": example(result, writer.upstream)},
            answer | {"result": f"{TODO}: a result that breaks one rule"},
            role="result",
        )
    writer.cases(relpath, stubs)


def _upstream_method(writer: _Writer, wire: str) -> tuple[str, str, str | None] | None:
    method = writer.upstream_methods.get(wire)
    if method is None or method.params is None:
        writer.skipped.append(f"{wire}: upstream binds no params definition")
        return None
    names = [method.params, method.result or ""]
    if method.side not in SIDES or any("|" in name for name in names):
        writer.skipped.append(f"{wire}: side {method.side}, params {method.params} — by hand")
        return None
    return method.side, method.params, method.result


def _scaffold_update(writer: _Writer, index: dict[str, Any], kind: str, target: str) -> None:
    relpath = f"updates/{kind}.json"
    arm_name = "SessionUpdate" + camel(kind)
    if target:
        writer.place([target], relpath, kind)
    document = writer.document(relpath, kind)
    arm: dict[str, Any] = {
        "description": f"{TODO}: describe the {kind} update in our own words.",
        "type": "object",
        "properties": {
            "sessionUpdate": {
                "description": f"Tag value `{kind}` selecting this kind of update.",
                "type": "string",
                "const": kind,
            }
        },
        "required": ["sessionUpdate"],
    }
    if target:
        arm["allOf"] = [{"$ref": writer.reference(target, relpath)}]
    document["$defs"] = {arm_name: arm, **document["$defs"]}
    index["updates"][kind] = {"file": relpath, "def": arm_name}
    update = {"sessionUpdate": kind} | (example(target, writer.upstream) if target else {})
    valid = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "sess_scaffold", "update": update},
    }
    invalid = {"jsonrpc": "2.0", "method": "session/update", "params": {"update": update}}
    writer.cases(relpath, _stubs("session/update", valid, invalid))


def _stubs(
    method: str, valid: dict[str, Any], invalid: dict[str, Any], role: str = "params"
) -> list[dict[str, Any]]:
    return [
        {
            "description": f"{TODO}: name this valid {role} case and make it realistic",
            "method": method,
            "message": valid,
            "valid": True,
        },
        {
            "description": f"{TODO}: name this invalid {role} case; make it break one rule",
            "method": method,
            "message": invalid,
            "valid": False,
        },
    ]


# -------------------------------------------------------------------------------- examples


def example(name: str | None, definitions: Mapping[str, Any]) -> Any:
    """A small instance of definition ``name``: required fields only, first union arm."""
    if name is None:
        return None
    return _example({"$ref": f"#/$defs/{name}"}, definitions, 0)


def _example(node: Any, definitions: Mapping[str, Any], depth: int) -> Any:
    if not isinstance(node, dict) or depth > 12:
        return None
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    if "$ref" in node:
        return _example(definitions[node["$ref"].rsplit("/", 1)[-1]], definitions, depth + 1)
    parts = node.get("allOf", [])
    if len(parts) == 1 and not {"properties", "type", "anyOf", "oneOf"} & set(node):
        return _example(parts[0], definitions, depth + 1)  # a wrapped reference
    merged: dict[str, Any] = {}
    for part in node.get("allOf", []):
        value = _example(part, definitions, depth + 1)
        if isinstance(value, dict):
            merged |= value
    arms = node.get("anyOf") or node.get("oneOf")
    if arms:
        chosen = next((a for a in arms if not _is_null(a)), arms[0])
        value = _example(chosen, definitions, depth + 1)
        if not isinstance(value, dict) or "properties" not in node:
            return value if not merged else merged | (value if isinstance(value, dict) else {})
        merged |= value
    kinds = node.get("type")
    kind = next((k for k in kinds if k != "null"), "null") if isinstance(kinds, list) else kinds
    if kind == "object" or "properties" in node or merged:
        for prop in node.get("required", []):
            schema = (node.get("properties") or {}).get(prop, {})
            merged.setdefault(prop, _example(schema, definitions, depth + 1))
        return merged
    return _scalar(kind, node, definitions, depth)


def _scalar(kind: Any, node: dict[str, Any], definitions: Mapping[str, Any], depth: int) -> Any:
    if kind == "string":
        return "example"
    if kind in ("integer", "number"):
        return node.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "array":
        count = node.get("minItems", 0)
        return [_example(node.get("items", {}), definitions, depth + 1) for _ in range(count)]
    return None


def _is_null(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "null"


# -------------------------------------------------------------------------------- todos


def todos(schema_dir: Path) -> list[str]:
    """Every ``TODO`` description left in schema and case files: ``relpath: location``."""
    found: list[str] = []
    for folder in (*SCHEMA_FOLDERS, "cases"):
        base = schema_dir / folder
        for path in sorted(base.rglob("*.json")) if base.is_dir() else []:
            relpath = path.relative_to(schema_dir).as_posix()
            document = json.loads(path.read_text(encoding="utf-8"))
            found += [f"{relpath}: {where}" for where in _todo_locations(document, "")]
    return found


def _todo_locations(node: Any, pointer: str) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{pointer}/{key}"
            if key == "description" and isinstance(value, str) and value.startswith(TODO):
                yield pointer or "/"
            else:
                yield from _todo_locations(value, here)
    elif isinstance(node, list):
        for position, item in enumerate(node):
            yield from _todo_locations(item, f"{pointer}/{position}")


def summary(result: ScaffoldResult, schema_dir: Path, newest_setting: str | None = None) -> str:
    """What the scaffold did and what a human writes next.

    ``newest_setting``: set when ``--upstream`` is not the configured newest release; the
    setting to change is then named too (tests compare cases with the newest upstream).
    """
    lines = [f"Scaffold wrote {len(result.written)} files under {schema_dir}:"]
    lines += [f"  {relpath}" for relpath in result.written]
    if result.skipped:
        lines.append("Left out (write by hand):")
        lines += [f"  {reason}" for reason in result.skipped]
    files = sorted({entry.split(":", 1)[0] for entry in todos(schema_dir)})
    lines.append(f"Files with TODOs to write ({len(files)}):")
    lines += [f"  {relpath}" for relpath in files]
    if newest_setting:
        lines.append(f"Then point {newest_setting} at the new upstream release.")
    lines += [
        "Next: python -m acp_schema.codegen && python -m pytest -q tests/schema_files "
        "tests/schema_cases  (fails naming each TODO until it is written)",
    ]
    return "\n".join(lines)


# -------------------------------------------------------------------------------- helpers


def _definition_files(schema_dir: Path) -> dict[str, str]:
    """Every definition of our folder → the schema file (relative) that declares it."""
    found: dict[str, str] = {}
    for folder in SCHEMA_FOLDERS:
        base = schema_dir / folder
        for path in sorted(base.rglob("*.json")) if base.is_dir() else []:
            document = json.loads(path.read_text(encoding="utf-8"))
            for name in document.get("$defs", {}):
                found[name] = path.relative_to(schema_dir).as_posix()
    return found


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[-1]} if isinstance(node.get("$ref"), str) else set()
        for value in node.values():
            found |= _refs(value)
        return found
    if isinstance(node, list):
        return set().union(*(_refs(item) for item in node)) if node else set()
    return set()
