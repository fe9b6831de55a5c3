"""``acp_schema.codegen_predicates``: standard-library predicates written from schemas.

Sound rather than complete: ``True`` only for values the schema accepts; a keyword the
generator does not translate makes its node answer ``False`` (the caller's full validation
decides then)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp_schema.codegen_predicates import render_predicates


def _compile(tmp_path: Path, params: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The ``initialize`` predicate generated from a one-method schema folder."""
    (tmp_path / "methods").mkdir()
    (tmp_path / "defs").mkdir()
    document = {"$defs": {"InitializeRequest": params}}
    (tmp_path / "methods" / "initialize.json").write_text(json.dumps(document))
    (tmp_path / "defs" / "common.json").write_text(json.dumps({"$defs": defs or {}}))
    index = {
        "methods": {
            "initialize": {"file": "methods/initialize.json", "params": "InitializeRequest"}
        }
    }
    rendered = render_predicates(tmp_path, index)
    assert rendered is not None
    body, sources = rendered
    namespace: dict[str, Any] = {}
    exec(compile(body, "predicates.py", "exec"), namespace)
    check: Callable[[object], bool] = namespace["PARAMS"]["initialize"]
    check.sources = sources  # type: ignore[attr-defined]
    return check


def test_objects_required_types_and_references(tmp_path: Path) -> None:
    check = _compile(
        tmp_path,
        {
            "type": "object",
            "properties": {
                "version": {"$ref": "../defs/common.json#/$defs/Version"},
                "name": {"type": ["string", "null"], "maxLength": 3},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2},
            },
            "required": ["version"],
            "additionalProperties": False,
        },
        {"Version": {"type": "integer", "format": "uint16", "minimum": 1}},
    )
    assert check.sources == ["defs/common.json", "methods/initialize.json"]
    assert check({"version": 1})
    assert check({"version": 65535, "name": None, "tags": ["a", "b"]})
    for bad in (
        {},
        {"version": 0},
        {"version": 65536},
        {"version": True},  # a boolean is not an integer
        {"version": 1.0},  # left to the full validation (JSON Schema would accept it)
        {"version": 1, "name": "long"},
        {"version": 1, "tags": ["c"]},
        {"version": 1, "tags": ["a", "a", "b"]},
        {"version": 1, "other": 1},
        [1],
        None,
    ):
        assert not check(bad), bad


def test_const_anyof_oneof_and_not(tmp_path: Path) -> None:
    check = _compile(
        tmp_path,
        {
            "type": "object",
            "properties": {
                "kind": {"const": 1},
                "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "one": {"oneOf": [{"type": "string"}, {"minLength": 2}]},
                "never": {"not": {"type": "string"}},
            },
        },
    )
    assert check({"kind": 1, "either": None, "never": 3})
    assert check({"kind": 1.0})  # JSON equality: 1 is 1.0
    assert not check({"kind": True})  # but true is not 1
    assert not check({"either": 3})
    assert not check({"never": "x"})
    assert check({"one": "a"})  # a string shorter than 2: the first arm only
    assert check({"one": 5})  # not a string: only the second arm (it bounds strings only)
    assert not check({"one": "abc"})  # both arms match: not exactly one


def test_an_untranslated_keyword_makes_its_node_undecided(tmp_path: Path) -> None:
    check = _compile(
        tmp_path,
        {
            "type": "object",
            "properties": {
                "url": {"type": "string", "pattern": "^https://"},
                "not_pattern": {"not": {"type": "string", "pattern": "x"}},
            },
        },
    )
    assert check({})
    assert not check({"url": "https://example.com"})  # valid, but not decided here
    assert not check({"not_pattern": 3})  # `not` of an undecided node is undecided too


def test_a_recursive_definition(tmp_path: Path) -> None:
    tree = {
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
        "additionalProperties": False,
    }
    check = _compile(tmp_path, {"$ref": "../defs/common.json#/$defs/Tree"}, {"Tree": tree})
    assert check({"children": [{"children": []}, {}]})
    assert not check({"children": [{"leaf": 1}]})


def test_a_version_without_those_methods_gets_no_module(tmp_path: Path) -> None:
    assert render_predicates(tmp_path, {"methods": {"session/prompt": {"params": "X"}}}) is None


@pytest.mark.parametrize("module", ["acp_bindings.predicates", "acp_bindings.v2.predicates"])
def test_the_generated_modules_import_nothing_else(module: str) -> None:
    code = (
        "import sys; before = set(sys.modules); "
        f"import {module}; "
        "print(sorted(m for m in set(sys.modules) - before if not m.startswith('acp_bindings')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
