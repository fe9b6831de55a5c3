"""Unions nested three deep generate named, correct models (the v2 ``state_update`` shape).

A synthetic schema in the shape of ACP v2's ``session/update`` → ``state_update`` → idle →
stop reason: an open union (``Event``) whose ``status`` arm extends another open union
(``Status``) whose ``stopped`` arm extends a union with its own properties
(``StoppedStatus``). The generator alone numbers these classes, emits some twice and loses
the innermost arms of the outermost union; the models must instead accept exactly what the
schema accepts, with every class named after what it combines.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acp_schema import codegen_models
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError


def _tagged(prop: str, value: str, ref: str | None = None) -> dict[str, Any]:
    arm: dict[str, Any] = {
        "type": "object",
        "properties": {prop: {"type": "string", "const": value}},
        "required": [prop],
    }
    if ref is not None:
        arm["allOf"] = [{"$ref": f"#/$defs/{ref}"}]
    return arm


def _other(prop: str, known: list[str]) -> dict[str, Any]:
    return {
        "title": "other",
        "type": "object",
        "properties": {prop: {"type": "string"}},
        "required": [prop],
        "not": {"anyOf": [_tagged(prop, value) for value in known]},
        "additionalProperties": True,
    }


DEFS: dict[str, Any] = {
    "Event": {
        "anyOf": [
            _tagged("event", "note", "Note"),
            _tagged("event", "status", "Status"),
            _other("event", ["note", "status"]),
        ]
    },
    "Note": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "Status": {
        "anyOf": [
            _tagged("phase", "busy", "BusyStatus"),
            _tagged("phase", "stopped", "StoppedStatus"),
            _other("phase", ["busy", "stopped"]),
        ]
    },
    "BusyStatus": {"type": "object", "properties": {"since": {"type": "string"}}},
    "StoppedStatus": {
        "type": "object",
        "properties": {"reason": {"type": ["string", "null"]}, "at": {"type": "string"}},
        "anyOf": [
            _tagged("reason", "done"),
            _tagged("reason", "failed", "Failure"),
            _other("reason", ["done", "failed"]),
            {"title": "none", "type": "object", "properties": {"reason": {"type": "null"}}},
        ],
    },
    "Failure": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
    "Labels": {
        "anyOf": [
            {"title": "words", "type": "array", "items": {"type": "string"}, "minItems": 1},
            {"title": "numbers", "type": "array", "items": {"type": "integer"}, "minItems": 1},
        ]
    },
}

CASES: list[tuple[dict[str, Any], str | None]] = [
    # (payload, class it must parse into — None when the schema rejects it)
    ({"event": "note", "text": "hi"}, "EventNote"),
    ({"event": "status", "phase": "busy"}, "EventStatusBusy"),
    ({"event": "status", "phase": "stopped", "reason": "done"}, "EventStatusStoppedDone"),
    (
        {"event": "status", "phase": "stopped", "reason": "failed", "message": "disk full"},
        "EventStatusStoppedFailed",
    ),
    ({"event": "status", "phase": "stopped"}, "EventStatusStoppedNone"),
    ({"event": "status", "phase": "stopped", "reason": "later"}, "EventStatusStoppedOther"),
    ({"event": "status", "phase": "paused"}, "EventStatusOther"),
    ({"event": "ping", "anything": 1}, "EventOther"),
    # broken known variants: never the catch-all
    ({"event": "note"}, None),
    ({"event": "status"}, None),
    ({"event": "status", "phase": "stopped", "reason": "failed"}, None),
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    root = tmp_path_factory.mktemp("nested")
    (root / "defs").mkdir()
    document = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": DEFS}
    (root / "defs" / "events.json").write_text(json.dumps(document), encoding="utf-8")
    (root / "index.json").write_text('{"methods": {}, "updates": {}, "errors": {}}', "utf-8")
    source = codegen_models.build_models(root)["models/defs/events.py"]
    module_file = root / "events_models.py"
    module_file.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("events_models", module_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["events_models"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["events_models"]
    return module


def test_every_class_is_named_from_the_schema(generated: ModuleType) -> None:
    names = set(vars(generated))
    assert [n for n in names if re.fullmatch(r"[A-Z]\w*\d", n)] == []
    assert {"StatusStoppedDone", "EventStatusStoppedFailed", "LabelsWords"} <= names
    source = Path(generated.__file__ or "").read_text(encoding="utf-8")
    defined = re.findall(r"^class (\w+)", source, re.M)
    assert len(defined) == len(set(defined)), "no class is emitted twice"


@pytest.mark.parametrize(("payload", "expected"), CASES, ids=[json.dumps(c[0]) for c in CASES])
def test_models_accept_exactly_what_the_schema_accepts(
    generated: ModuleType, payload: dict[str, Any], expected: str | None
) -> None:
    schema = {"$ref": "#/$defs/Event", "$defs": DEFS}
    assert Draft202012Validator(schema).is_valid(payload) == (expected is not None)
    adapter: TypeAdapter[Any] = TypeAdapter(generated.Event)
    if expected is None:
        with pytest.raises(ValidationError):
            adapter.validate_python(payload)
    else:
        parsed = adapter.validate_python(payload)
        assert type(parsed).__name__ == expected
        assert adapter.dump_python(parsed, by_alias=True, exclude_unset=True) == payload
