"""Wire cases of protocol v2 (schema/v2/cases/**.json): labelled verdicts, coverage, upstream.

Same case format as v1 (tests/schema_cases): ``{"description", "method", "message", "valid"}``.
"""

from __future__ import annotations

import copy
import functools
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import acp_schema
import pytest
from acp_schema import load_index, reference
from acp_schema.validation import validate_error, validate_message, validate_params, validate_result
from jsonschema import Draft202012Validator

V2 = 2
CASES_DIR = Path(acp_schema.__file__).resolve().parent / "v2" / "cases"
UPSTREAM_V2 = reference.newest_upstream("v2")

Case = tuple[str, int, dict[str, Any]]


def _load_cases() -> list[Case]:
    cases: list[Case] = []
    for path in sorted(CASES_DIR.rglob("*.json")):
        relpath = path.relative_to(CASES_DIR).as_posix()
        for number, case in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            cases.append((relpath, number, case))
    return cases


CASES = _load_cases()
CASE_IDS = [f"{relpath}#{number}:{case.get('description')}" for relpath, number, case in CASES]


def _role(message: dict[str, Any]) -> str:
    if "method" in message:
        return "params"
    return "error" if "error" in message else "result"


def test_case_files_mirror_v2_schema_files() -> None:
    assert len(CASES) > 100
    schema_files = {relpath for relpath, _ in acp_schema.iter_documents(version=V2)}
    assert {relpath for relpath, _, _ in CASES} <= schema_files


@pytest.mark.parametrize(("relpath", "number", "case"), CASES, ids=CASE_IDS)
def test_case_validates_as_labelled(relpath: str, number: int, case: dict[str, Any]) -> None:
    assert set(case) == {"description", "method", "message", "valid"}
    assert case["method"] in load_index(version=V2)["methods"]
    errors = validate_message(case["message"], method=case["method"], version=V2)
    if case["valid"]:
        assert errors == []
    else:
        assert errors, "an invalid case was accepted"


def test_every_method_update_kind_and_error_code_has_valid_and_invalid_cases() -> None:
    index = load_index(version=V2)
    file_of_update = {entry["file"]: kind for kind, entry in index["updates"].items()}
    file_of_error = {entry["file"]: code for code, entry in index["errors"].items()}
    covered: dict[tuple[str, str, str], set[bool]] = defaultdict(set)
    for relpath, _, case in CASES:
        if relpath in file_of_update:
            covered[("update", file_of_update[relpath], "params")].add(case["valid"])
        elif relpath in file_of_error:
            covered[("error", file_of_error[relpath], "error")].add(case["valid"])
        elif index["methods"][case["method"]]["file"] == relpath:
            covered[("method", case["method"], _role(case["message"]))].add(case["valid"])
    required = [("method", m, "params") for m in index["methods"]]
    required += [("method", m, "result") for m, e in index["methods"].items() if e["result"]]
    required += [("update", kind, "params") for kind in index["updates"]]
    required += [("error", code, "error") for code in index["errors"]]
    missing = [key for key in required if covered.get(key) != {True, False}]
    assert missing == [], f"need a valid and an invalid case for: {missing}"


def test_a_broken_known_update_is_not_taken_for_an_unknown_one() -> None:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update"}},
    }
    assert validate_message(message, version=V2) == [
        "$.params.update: 'toolCallId' is a required property"
    ]


def test_the_same_message_gets_each_versions_verdict() -> None:
    prompt_result = {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}
    assert validate_message(prompt_result, method="session/prompt") == []
    assert validate_message(prompt_result, method="session/prompt", version=V2) != []
    load = {"jsonrpc": "2.0", "id": 4, "method": "session/load", "params": {}}
    assert validate_message(load, version=V2) == ["$.method: unknown method 'session/load'"]


@functools.cache
def _upstream_defs() -> dict[str, Any] | None:
    if not UPSTREAM_V2.is_file():
        return None
    defs: dict[str, Any] = json.loads(UPSTREAM_V2.read_text(encoding="utf-8"))["$defs"]
    return defs


def _upstream_name(defs: dict[str, Any], method: str, role: str) -> str | None:
    if role == "error":
        return "Error"
    for name, schema in defs.items():
        if schema.get("x-method") == method and name.endswith("Response") == (role == "result"):
            return name
    return None


@pytest.mark.reference
@pytest.mark.parametrize(("relpath", "number", "case"), CASES, ids=CASE_IDS)
def test_case_agrees_with_upstream_v2(relpath: str, number: int, case: dict[str, Any]) -> None:
    reference.require(UPSTREAM_V2)
    defs = _upstream_defs()
    assert defs is not None
    if relpath.startswith("defs/jsonrpc"):
        pytest.skip("envelope case: upstream binds no envelope to a method")
    message, method, role = case["message"], case["method"], _role(case["message"])
    name = _upstream_name(defs, method, role)
    assert name is not None, (method, role)
    if role == "params":
        payload = message.get("params")
        ours = validate_params(method, payload, version=V2)
    elif role == "result":
        payload = message["result"]
        ours = validate_result(method, payload, version=V2)
    else:
        # Upstream leaves `data` of most codes open; our per-code shapes are an extension.
        payload = copy.deepcopy(message["error"])
        if isinstance(payload, dict):
            payload.pop("data", None)
        ours = validate_error(payload, version=V2)
    validator = Draft202012Validator(
        {"$ref": f"#/$defs/{name}", "$defs": defs},
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )
    upstream_valid = not any(validator.iter_errors(payload))
    assert upstream_valid == (not ours), f"upstream {name}: {upstream_valid}, ours: {ours}"


def _round_trip_target(case: dict[str, Any]) -> tuple[str, Any] | None:
    message = case["message"]
    if not case["valid"] or "error" in message:
        return None
    if "method" in message:
        if message["method"] != case["method"] or "params" not in message:
            return None
        return "params", message["params"]
    return "result", message["result"]


ROUND_TRIP = [(r, n, c) for r, n, c in CASES if _round_trip_target(c) is not None]
#: Invalid cases the generated models still accept: an optional, non-nullable property given
#: as ``null`` (the generator types every optional field ``X | None``). Strict, so a fix shows.
BINDINGS_ACCEPT_NULL = {"configOptions is null (an array or absent in v2)"}
INVALID_PAYLOADS = [
    pytest.param(
        r,
        n,
        c,
        id=f"{r}#{n}:{c['description']}",
        marks=[pytest.mark.xfail(strict=True, reason="optional fields accept null")]
        if c["description"] in BINDINGS_ACCEPT_NULL
        else [],
    )
    for r, n, c in CASES
    if not c["valid"] and "error" not in c["message"] and not r.startswith("defs/jsonrpc")
]


@pytest.mark.parametrize(
    ("relpath", "number", "case"),
    ROUND_TRIP,
    ids=[f"{r}#{n}:{c['description']}" for r, n, c in ROUND_TRIP],
)
def test_valid_case_round_trips_through_v2_bindings(
    relpath: str, number: int, case: dict[str, Any]
) -> None:
    from acp_bindings.v2.methods import METHODS

    target = _round_trip_target(case)
    assert target is not None
    role, data = target
    spec = METHODS[case["method"]]
    model = spec.params_model() if role == "params" else spec.result_model()
    dumped = model.model_validate(data).model_dump(by_alias=True, exclude_unset=True, mode="json")
    assert dumped == data


@pytest.mark.parametrize(("relpath", "number", "case"), INVALID_PAYLOADS)
def test_invalid_case_is_refused_by_v2_bindings(
    relpath: str, number: int, case: dict[str, Any]
) -> None:
    """Validated strictly from JSON, as the runtime's router validates inbound params."""
    from acp_bindings.v2.methods import METHODS
    from pydantic import ValidationError

    message = case["message"]
    spec = METHODS[case["method"]]
    if "method" in message:
        model, data = spec.params_model(), message.get("params") or {}
    else:
        model, data = spec.result_model(), message["result"]
    with pytest.raises(ValidationError):
        model.model_validate_json(json.dumps(data), strict=True, by_alias=True, by_name=False)
