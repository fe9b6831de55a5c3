"""Standard-library predicates for request params, written from the schemas (``predicates.py``).

The agent's start-up fast path answers a few requests before pydantic and the generated
models are imported (see ``iac_code.prelude``). What it may answer is decided by these
predicates rather than by checks written by hand, so a schema change reaches the fast path
with the next ``python -m acp_schema.codegen`` and the two can never drift apart.

Each schema node becomes one small function ``(value) -> bool``. The translation covers
the JSON Schema keywords the protocol's schemas use (types, properties, required,
additionalProperties, items, const, enum, numeric and length bounds, integer formats,
``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``). A node using any other keyword compiles
to ``return False``: the predicates are sound rather than complete, ``True`` meaning "valid
for the schema" and ``False`` meaning "invalid, or not decided here": the caller then leaves
the request to the full runtime, which validates it properly.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_schema.codegen_common import py_literal, python_method_name

#: Requests the fast path may answer: only these get predicates (kept small: the module is
#: imported on the start-up path). A method a version does not define is skipped.
PREDICATE_METHODS = ("initialize", "session/new")

#: Keywords that only describe (no effect on validity).
_ANNOTATIONS = frozenset(
    {"$comment", "$schema", "$id", "title", "description", "default", "examples", "deprecated"}
)
#: Integer formats the schemas use for fixed-width numbers: the range they imply.
_INTEGER_FORMATS = {
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_TYPE_TESTS = {
    "object": "isinstance(v, dict)",
    "array": "isinstance(v, list)",
    "string": "isinstance(v, str)",
    "boolean": "isinstance(v, bool)",
    "null": "v is None",
    # JSON Schema counts 1.0 as an integer; the fast path does not (the runtime judges it).
    "integer": "_is_int(v)",
    "number": "_is_number(v)",
}

#: The JSON value tests every version's predicates share: written once, as
#: ``acp_bindings/predicate_support.py`` (by the v1 target), and imported by each
#: ``predicates.py``. Standard library only, like the predicates themselves.
SUPPORT_MODULE = "acp_bindings.predicate_support"

SUPPORT = '''"""JSON value tests shared by the generated ``predicates`` modules (stdlib only)."""

from __future__ import annotations


def is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def same(a: object, b: object) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if is_number(a) and is_number(b):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b
'''

_PRELUDE = f'''"""Checks of request params, from the schemas, with the standard library only.

``True``: the params are valid for the schema. ``False``: invalid, or beyond what these
checks decide; leave the request to the full validation. This module imports only
``{SUPPORT_MODULE}``, which imports nothing: the agent's start-up fast path can
use both before pydantic is loaded.
"""

from __future__ import annotations

from {SUPPORT_MODULE} import is_int as _is_int
from {SUPPORT_MODULE} import is_number as _is_number
from {SUPPORT_MODULE} import same as _same
'''


@dataclass
class _Function:
    name: str
    lines: list[str]
    exact: bool


@dataclass
class PredicateCompiler:
    """Compiles schema nodes of one version's schema folder into predicate functions."""

    schema_dir: Path
    functions: dict[str, _Function] = field(default_factory=dict)
    sources: set[str] = field(default_factory=set)
    _by_key: dict[tuple[str, str], str] = field(default_factory=dict)
    _documents: dict[str, Any] = field(default_factory=dict)
    _by_body: dict[tuple[tuple[str, ...], bool], str] = field(default_factory=dict)

    def definition(self, relpath: str, pointer: str) -> str:
        """The function checking the node at ``relpath#pointer`` (compiled once)."""
        key = (relpath, pointer)
        if key not in self._by_key:
            node = self._document(relpath)
            for part in pointer.strip("/").split("/"):
                if part:
                    node = node[part.replace("~1", "/").replace("~0", "~")]
            stem = relpath.removesuffix(".json").replace("/", "_").replace(".", "_")
            hint = f"_{stem}_{pointer.rsplit('/', 1)[-1]}"
            self._compile(relpath, node, hint, key=key)
        return self._by_key[key]

    def _document(self, relpath: str) -> Any:
        if relpath not in self._documents:
            self.sources.add(relpath)
            text = (self.schema_dir / relpath).read_text(encoding="utf-8")
            self._documents[relpath] = json.loads(text)
        return self._documents[relpath]

    def _unique(self, hint: str) -> str:
        name = re.sub(r"\W", "_", hint)
        candidate, number = name, 2
        while candidate in self.functions:
            candidate, number = f"{name}_{number}", number + 1
        return candidate

    def _compile(
        self, relpath: str, node: Any, hint: str, key: tuple[str, str] | None = None
    ) -> str:
        free = (
            {"additionalProperties"}
            if isinstance(node, dict) and node.get("additionalProperties") is True
            else set()
        )
        if isinstance(node, dict) and set(node) - _ANNOTATIONS - free == {"type"}:
            types = node["type"]
            hint = "_is_" + "_or_".join([types] if isinstance(types, str) else types)
        name = self._unique(hint)
        function = _Function(name, [], exact=True)
        # Known before the body is: a definition may refer to itself (a tree).
        self.functions[name] = function
        if key is not None:
            self._by_key[key] = name
        function.lines, function.exact = self._body(relpath, node, name)
        body = (tuple(function.lines), function.exact)
        same = self._by_body.get(body)
        recursive = any(re.search(rf"\b{name}\(", line) for line in function.lines)
        if same is not None and not recursive:  # e.g. the many free-form ``_meta`` objects
            del self.functions[name]
            if key is not None:
                self._by_key[key] = same
            return same
        self._by_body[body] = name
        return name

    def _ref(self, relpath: str, ref: str) -> str:
        target, _, pointer = ref.partition("#")
        if target:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(relpath), target))
        return self.definition(target or relpath, pointer)

    def _sub(self, relpath: str, node: Any, hint: str) -> tuple[str, bool]:
        """A function for a nested node (and whether it decides exactly)."""
        keywords = set(node) - _ANNOTATIONS if isinstance(node, dict) else set()
        if keywords == {"$ref"}:
            name = self._ref(relpath, node["$ref"])
        elif keywords == {"allOf"} and len(node["allOf"]) == 1:  # a described reference
            return self._sub(relpath, node["allOf"][0], hint)
        else:
            name = self._compile(relpath, node, hint)
        return name, self.functions[name].exact

    def _body(self, relpath: str, node: Any, name: str) -> tuple[list[str], bool]:
        if node is True or node == {}:
            return ["return True"], True
        if not isinstance(node, dict) or node is False:
            return ["return False"], node is False
        keywords = {k for k in node if k not in _ANNOTATIONS and not k.startswith("x-")}
        keywords.discard("$defs")
        handled = {
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "const",
            "enum",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "format",
            "$ref",
            "allOf",
            "anyOf",
            "oneOf",
            "not",
        }
        unknown_format = "format" in node and node["format"] not in _INTEGER_FORMATS
        if keywords - handled or unknown_format:
            return ["return False  # a keyword the generator does not translate"], False
        lines: list[str] = []
        exact = True
        types = node.get("type")
        if types is not None:
            tests = [_TYPE_TESTS[t] for t in ([types] if isinstance(types, str) else types)]
            exact = exact and "integer" not in (types if isinstance(types, list) else [types])
            test = tests[0] if len(tests) == 1 else f"({' or '.join(tests)})"
            lines.append(f"if not {test}:")
            lines.append("    return False")
        if "const" in node:
            lines += [f"if not _same(v, {py_literal(node['const'])}):", "    return False"]
        if "enum" in node:
            values = ", ".join(py_literal(value) for value in node["enum"])
            lines += [f"if not any(_same(v, e) for e in ({values},)):", "    return False"]
        lines += self._number_bounds(node)
        for keyword, test in (("minLength", "<"), ("maxLength", ">")):
            if keyword in node:
                lines += [f"if isinstance(v, str) and len(v) {test} {node[keyword]}:"]
                lines += ["    return False"]
        for keyword, test in (("minItems", "<"), ("maxItems", ">")):
            if keyword in node:
                lines += [f"if isinstance(v, list) and len(v) {test} {node[keyword]}:"]
                lines += ["    return False"]
        if "items" in node:
            check, sub_exact = self._sub(relpath, node["items"], f"{name}__item")
            exact = exact and sub_exact
            lines += ["if isinstance(v, list):", "    for item in v:"]
            lines += [f"        if not {check}(item):", "            return False"]
        object_lines, object_exact = self._object(relpath, node, name)
        lines += object_lines
        exact = exact and object_exact
        if "$ref" in node:
            check, sub_exact = self._sub(relpath, {"$ref": node["$ref"]}, name)
            exact = exact and sub_exact
            lines += [f"if not {check}(v):", "    return False"]
        for keyword in ("allOf", "anyOf", "oneOf"):
            if keyword not in node:
                continue
            arms = [
                self._sub(relpath, arm, f"{name}__{keyword}{i}")
                for i, arm in enumerate(node[keyword])
            ]
            exact = exact and all(arm_exact for _, arm_exact in arms)
            calls = [f"{check}(v)" for check, _ in arms]
            if keyword == "allOf":
                lines += [f"if not {check}:\n    return False" for check in calls]
            elif keyword == "anyOf":
                lines += [f"if not ({' or '.join(calls)}):", "    return False"]
            elif all(arm_exact for _, arm_exact in arms):  # oneOf: exactly one arm
                lines += [f"if [{', '.join(calls)}].count(True) != 1:", "    return False"]
            else:  # an arm that cannot decide could be a second match
                return ["return False  # oneOf with an arm the generator cannot decide"], False
        if "not" in node:
            check, sub_exact = self._sub(relpath, node["not"], f"{name}__not")
            if not sub_exact:
                return ["return False  # not of a node the generator cannot decide"], False
            lines += [f"if {check}(v):", "    return False"]
        return [*lines, "return True"], exact

    @staticmethod
    def _number_bounds(node: dict[str, Any]) -> list[str]:
        bounds: list[tuple[str, object]] = []
        if node.get("format") in _INTEGER_FORMATS:
            low, high = _INTEGER_FORMATS[node["format"]]
            bounds += [("<", low), (">", high)]
        for keyword, test in (
            ("minimum", "<"),
            ("maximum", ">"),
            ("exclusiveMinimum", "<="),
            ("exclusiveMaximum", ">="),
        ):
            if keyword in node:
                bounds.append((test, node[keyword]))
        lines: list[str] = []
        for test, bound in dict.fromkeys(bounds):  # a format's range often repeats min/max
            number = "isinstance(v, int | float) and not isinstance(v, bool)"
            lines += [f"if {number} and v {test} {bound!r}:", "    return False"]
        return lines

    def _object(self, relpath: str, node: dict[str, Any], name: str) -> tuple[list[str], bool]:
        properties: dict[str, Any] = node.get("properties", {})
        required: list[str] = node.get("required", [])
        additional = node.get("additionalProperties", True)
        if not properties and not required and additional is True:
            return [], True
        exact = True
        lines: list[str] = []
        for key in required:
            lines += [f"if {py_literal(key)} not in v:", "    return False"]
        branches: list[str] = []
        for key, schema in properties.items():
            check, sub_exact = self._sub(relpath, schema, f"{name}__{key}")
            exact = exact and sub_exact
            keyword = "if" if not branches else "elif"
            branches += [f"{keyword} key == {py_literal(key)}:"]
            branches += [f"    if not {check}(item):", "        return False"]
        if additional is not True:
            check, sub_exact = self._sub(relpath, additional, f"{name}__additional")
            exact = exact and sub_exact
            other = [f"if not {check}(item):", "    return False"]
            branches += ["else:", *(f"    {line}" for line in other)] if branches else other
        if branches:
            lines += ["for key, item in v.items():", *(f"    {line}" for line in branches)]
        if node.get("type") != "object":  # otherwise checked already
            lines = ["if isinstance(v, dict):", *(f"    {line}" for line in lines)]
        return lines, exact

    def render_functions(self) -> str:
        blocks = []
        for function in self.functions.values():
            body = "\n".join(
                f"    {line}" for chunk in function.lines for line in chunk.split("\n")
            )
            blocks.append(f"def {function.name}(v: object) -> bool:\n{body}\n")
        return "\n\n".join(blocks)


def render_predicates(schema_dir: Path, index: dict[str, Any]) -> tuple[str, list[str]] | None:
    """(``predicates.py``, the schema files it was written from), or None when the version
    defines none of :data:`PREDICATE_METHODS`."""
    methods = index.get("methods", {})
    chosen = [m for m in PREDICATE_METHODS if m in methods and methods[m].get("params")]
    if not chosen:
        return None
    compiler = PredicateCompiler(schema_dir)
    public: list[str] = []
    table: list[str] = []
    for method in chosen:
        entry = methods[method]
        check = compiler.definition(entry["file"], f"/$defs/{entry['params']}")
        function = f"{python_method_name(method)}_params"
        public.append(
            f"def {function}(params: object) -> bool:\n"
            f'    """Whether ``params`` are certainly valid ``{method}`` params."""\n'
            f"    return {check}(params)\n"
        )
        table.append(f"    {py_literal(method)}: {function},")
    body = "\n\n".join(
        [
            _PRELUDE,
            "\n\n".join(public),
            "#: Wire method -> its params predicate.\nPARAMS = {\n" + "\n".join(table) + "\n}\n",
            compiler.render_functions(),
        ]
    )
    return body, sorted(compiler.sources)
