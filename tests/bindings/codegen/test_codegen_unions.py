"""Open unions: the catch-all arm takes new tag values but never a broken known variant.

The oracle is the schema itself (``jsonschema`` through ``acp_schema.validation``): a payload
the schema rejects must not parse into the generated models through the "other" arm.
"""

from __future__ import annotations

from typing import Any

import pytest
from acp_bindings.methods import METHODS
from acp_schema import validation
from acp_schema.codegen_postprocess import reject_known_tags
from acp_schema.codegen_prepare import BranchNames, prepare_document
from pydantic import BaseModel, ValidationError

BROKEN_KNOWN = [
    # (method, "params"|"result", payload): a known tag whose own shape does not match.
    ("elicitation/create", "result", {"action": "accept", "content": "not an object"}),
    ("elicitation/create", "params", {"mode": "form", "sessionId": "s1"}),
    ("elicitation/create", "params", {"mode": "url", "requestId": 1}),
]

FUTURE = [
    ("elicitation/create", "result", {"action": "snooze", "until": "later"}),
    ("elicitation/create", "params", {"mode": "voice", "sessionId": "s1", "message": "Hi"}),
]


def _model(method: str, part: str) -> type[BaseModel]:
    spec = METHODS[method]
    model = spec.params_model() if part == "params" else spec.result_model()
    assert model is not None
    return model


def _schema_errors(method: str, part: str, payload: dict[str, Any]) -> list[str]:
    check = validation.validate_params if part == "params" else validation.validate_result
    return check(method, payload)


@pytest.mark.parametrize(("method", "part", "payload"), BROKEN_KNOWN)
def test_a_broken_known_variant_is_refused_like_the_schema_does(
    method: str, part: str, payload: dict[str, Any]
) -> None:
    assert _schema_errors(method, part, payload), "the case must be invalid by the schema"
    with pytest.raises(ValidationError, match="is a known variant"):
        _model(method, part).model_validate(payload)


@pytest.mark.parametrize(("method", "part", "payload"), FUTURE)
def test_a_new_tag_value_still_parses_as_the_catch_all(
    method: str, part: str, payload: dict[str, Any]
) -> None:
    assert _schema_errors(method, part, payload) == []
    parsed = _model(method, part).model_validate(payload)
    arm = type(getattr(parsed, "root", parsed)).__name__
    assert "Other" in arm
    assert parsed.model_dump(by_alias=True, exclude_unset=True, mode="json") == payload


def test_a_broken_nested_property_schema_is_refused() -> None:
    from acp_bindings.models import ElicitationPropertySchemaOther

    with pytest.raises(ValidationError, match="is a known variant"):
        ElicitationPropertySchemaOther.model_validate({"type": "string"})
    assert ElicitationPropertySchemaOther.model_validate({"type": "date"}).type == "date"


def _open_union_document() -> dict[str, Any]:
    known = ["circle", "square"]
    return {
        "$defs": {
            "Shape": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"type": "string", "const": value}},
                        "required": ["kind"],
                    }
                    for value in known
                ]
                + [
                    {
                        "title": "other",
                        "type": "object",
                        "properties": {"kind": {"type": "string"}},
                        "required": ["kind"],
                        "not": {
                            "anyOf": [
                                {"properties": {"kind": {"const": value}}, "required": ["kind"]}
                                for value in known
                            ]
                        },
                    }
                ]
            }
        }
    }


def test_the_catch_all_branch_is_recorded_with_its_refused_tags() -> None:
    names = BranchNames()
    prepare_document(_open_union_document(), "defs/shape.json", names)
    assert names.open_tags == {"ShapeOther": ("kind", ("circle", "square"))}


def test_a_validator_is_added_to_the_catch_all_class_only() -> None:
    names = BranchNames(open_tags={"ShapeOther": ("kind", ("circle", "square"))})
    source = "\n".join(
        [
            "from pydantic import BaseModel",
            "",
            "",
            "class ShapeCircle(BaseModel):",
            "    kind: str",
            "",
            "",
            "class ShapeOther(BaseModel):",
            "    kind: str",
        ]
    )
    fixed = reject_known_tags({"defs/shape.py": source}, names)["defs/shape.py"]
    assert fixed.count("@field_validator") == 1
    namespace: dict[str, Any] = {}
    exec(compile(fixed, "shape.py", "exec"), namespace)
    with pytest.raises(ValidationError):
        namespace["ShapeOther"].model_validate({"kind": "circle"})
    assert namespace["ShapeOther"].model_validate({"kind": "star"}).kind == "star"
    assert namespace["ShapeCircle"].model_validate({"kind": "circle"}).kind == "circle"
