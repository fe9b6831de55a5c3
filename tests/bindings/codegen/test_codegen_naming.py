"""Naming rules applied before and after datamodel-code-generator runs."""

from __future__ import annotations

from typing import Any

import pytest
from acp_schema.codegen_postprocess import PostprocessError, name_combinations
from acp_schema.codegen_prepare import BranchNames, prepare_document


def _prepare(defs: dict[str, Any]) -> tuple[dict[str, Any], BranchNames]:
    names = BranchNames(all_definitions=frozenset(defs))
    prepared = prepare_document({"title": "t", "$defs": defs}, "defs/x.json", names)
    return prepared["$defs"], names


def test_branches_are_named_by_tag_title_or_reference() -> None:
    defs, names = _prepare(
        {
            "Shape": {
                "title": "ignored",
                "anyOf": [
                    {"type": "object", "properties": {"kind": {"const": "circle"}}},
                    {"type": "object", "title": "free form", "properties": {"kind": {}}},
                    {"title": "square", "allOf": [{"$ref": "#/$defs/Square"}]},
                ],
            },
            "Square": {"type": "object"},
        }
    )
    circle, free, square = defs["Shape"]["anyOf"]
    assert "title" not in defs["Shape"]
    assert circle["title"] == "ShapeCircle"
    assert free["title"] == "ShapeFreeForm"
    assert square == {"$ref": "#/$defs/Square"}, "a bare reference in a pure union collapses"
    assert names.suffix == {"ShapeCircle": "Circle", "ShapeFreeForm": "FreeForm"}
    assert names.owner["ShapeCircle"] == "defs/x.json"


def test_clash_with_a_definition_gets_variant_and_mixins_keep_names() -> None:
    defs, _ = _prepare(
        {
            "Server": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"type": {"const": "http"}},
                        "allOf": [{"$ref": "#/$defs/ServerHttp"}],
                    }
                ]
            },
            "ServerHttp": {"type": "object"},
            "Mode": {
                "type": "object",
                "properties": {"url": {"type": "string"}},
                "anyOf": [{"title": "Session", "allOf": [{"$ref": "#/$defs/ServerHttp"}]}],
            },
        }
    )
    assert defs["Server"]["anyOf"][0]["title"] == "ServerHttpVariant"
    assert defs["Mode"]["anyOf"][0]["title"] == "ModeSession"


def test_scalar_branches_stay_inline() -> None:
    defs, _ = _prepare({"Id": {"anyOf": [{"type": "integer"}, {"type": "null"}]}})
    assert defs["Id"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]


def _combination_modules(extra: str = "") -> dict[str, str]:
    return {
        "m.py": (
            "class ModeSession(BaseModel):\n    pass\n\n\n"
            "class Req1(BaseModel):\n    pass\n\n\n"
            "class Req2(ModeSession, Req1):\n    pass\n" + extra
        )
    }


def test_combinations_are_named_after_their_bases() -> None:
    names = BranchNames(suffix={"ModeSession": "Session"}, declared={"Req": "m.json"})
    renamed = name_combinations(_combination_modules(), names)["m.py"]
    assert "class ReqBase(BaseModel)" in renamed
    assert "class ReqSession(ModeSession, ReqBase)" in renamed


def test_unnameable_numbered_classes_fail_loudly() -> None:
    names = BranchNames(suffix={"ModeSession": "Session"}, declared={"Req": "m.json"})
    with pytest.raises(PostprocessError, match="Other1"):
        name_combinations(_combination_modules("\n\nclass Other1(BaseModel):\n    pass\n"), names)
