"""Wire cases (schema/cases/**.json) against our schemas, the index and upstream.

Each case is ``{"description", "method", "message", "valid"}``: a whole JSON-RPC message and
whether it conforms. ``method`` names the method the message belongs to — for a response,
the method of the request it answers (responses do not carry it on the wire).
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

CASES_DIR = Path(acp_schema.__file__).resolve().parent / "cases"
UPSTREAM_FILES = (
    reference.newest_upstream("v1"),
    # Only consulted for methods the stable schema lacks (session/fork).
    reference.newest_upstream("v1", unstable=True),
)
CASE_KEYS = {"description", "method", "message", "valid"}

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
    """Which part of a method a message exercises: its params, its result, or an error."""
    if "method" in message:
        return "params"
    return "error" if "error" in message else "result"


def test_cases_exist() -> None:
    assert len(CASES) > 200


def test_case_files_mirror_schema_files() -> None:
    schema_files = {relpath for relpath, _ in acp_schema.iter_documents()}
    case_files = {relpath for relpath, _, _ in CASES}
    assert case_files <= schema_files, sorted(case_files - schema_files)


@pytest.mark.parametrize(("relpath", "number", "case"), CASES, ids=CASE_IDS)
def test_case_is_well_formed(relpath: str, number: int, case: dict[str, Any]) -> None:
    assert set(case) == CASE_KEYS
    assert isinstance(case["description"], str) and case["description"].strip()
    assert "\n" not in case["description"]
    assert isinstance(case["valid"], bool)
    assert isinstance(case["message"], dict)
    assert case["method"] in load_index()["methods"]


@pytest.mark.parametrize(("relpath", "number", "case"), CASES, ids=CASE_IDS)
def test_case_validates_as_labelled(relpath: str, number: int, case: dict[str, Any]) -> None:
    errors = validate_message(case["message"], method=case["method"])
    if case["valid"]:
        assert errors == []
    else:
        assert errors, "an invalid case was accepted"


def test_case_descriptions_are_unique_per_method_and_role() -> None:
    seen: dict[tuple[str, str, str, str], int] = defaultdict(int)
    for relpath, _, case in CASES:
        seen[(relpath, case["method"], _role(case["message"]), case["description"])] += 1
    assert [key for key, count in seen.items() if count > 1] == []


def _coverage() -> dict[tuple[str, str, str], set[bool]]:
    """``(area, name, role) -> {valid flags}`` for cases filed next to their schema file."""
    index = load_index()
    file_of_update = {entry["file"]: kind for kind, entry in index["updates"].items()}
    file_of_error = {entry["file"]: code for code, entry in index["errors"].items()}
    covered: dict[tuple[str, str, str], set[bool]] = defaultdict(set)
    for relpath, _, case in CASES:
        message = case["message"]
        if relpath in file_of_update:
            covered[("update", file_of_update[relpath], "params")].add(case["valid"])
        elif relpath in file_of_error:
            covered[("error", file_of_error[relpath], "error")].add(case["valid"])
        elif index["methods"][case["method"]]["file"] == relpath:
            covered[("method", case["method"], _role(message))].add(case["valid"])
    return covered


def test_every_method_update_kind_and_error_code_has_valid_and_invalid_cases() -> None:
    index = load_index()
    required: list[tuple[str, str, str]] = []
    for method, entry in index["methods"].items():
        required.append(("method", method, "params"))
        if entry["kind"] == "request":
            required.append(("method", method, "result"))
    required += [("update", kind, "params") for kind in index["updates"]]
    required += [("error", code, "error") for code in index["errors"]]
    covered = _coverage()
    missing = [key for key in required if covered.get(key) != {True, False}]
    assert missing == [], f"need a valid and an invalid case for: {missing}"


def test_update_cases_carry_their_kind() -> None:
    index = load_index()
    for kind, entry in index["updates"].items():
        cases = [case for relpath, _, case in CASES if relpath == entry["file"]]
        assert cases, kind
        for case in cases:
            assert case["method"] == "session/update"
            assert case["message"]["params"]["update"].get("sessionUpdate") == kind, case


def test_error_cases_carry_their_code() -> None:
    index = load_index()
    for code, entry in index["errors"].items():
        for relpath, _, case in CASES:
            if relpath == entry["file"] and case["valid"]:
                assert case["message"]["error"]["code"] == int(code), case


# --------------------------------------------------------------------------------------------
# Cross-check with upstream: our verdict on the payload must be upstream's verdict.
# --------------------------------------------------------------------------------------------


@functools.cache
def _upstream_documents() -> tuple[dict[str, Any], ...]:
    return tuple(
        json.loads(path.read_text(encoding="utf-8"))["$defs"]
        for path in UPSTREAM_FILES
        if path.is_file()
    )


def _upstream_definition(method: str, role: str) -> tuple[dict[str, Any], str] | None:
    """The upstream definition x-method selects for ``method``'s params, result or error."""
    for defs in _upstream_documents():
        if role == "error":
            return defs, "Error"
        for name, schema in defs.items():
            is_result = name.endswith("Response")
            if schema.get("x-method") == method and is_result == (role == "result"):
                return defs, name
    return None


def _payload(message: dict[str, Any], role: str) -> Any:
    if role == "params":
        return message.get("params")
    if role == "result":
        return message["result"]
    # Upstream leaves error `data` open; its shapes are our extension (errors/*.json), so
    # only code and message are compared.
    error = copy.deepcopy(message["error"])
    if isinstance(error, dict):
        error.pop("data", None)
    return error


def _our_payload_errors(method: str, role: str, payload: Any) -> list[str]:
    if role == "params":
        return validate_params(method, payload)
    if role == "result":
        return validate_result(method, payload)
    return validate_error(payload)


@pytest.mark.reference
@pytest.mark.parametrize(("relpath", "number", "case"), CASES, ids=CASE_IDS)
def test_case_agrees_with_upstream(relpath: str, number: int, case: dict[str, Any]) -> None:
    reference.require(UPSTREAM_FILES[0])
    message, method = case["message"], case["method"]
    if relpath.startswith("defs/jsonrpc"):
        pytest.skip("envelope case: upstream binds no envelope to a method")
    role = _role(message)
    entry = load_index()["methods"][method]
    bound = entry["aliasOf"] or method
    if role == "params" and message.get("method") != method:
        pytest.skip("message names another method than the case")
    found = _upstream_definition(bound, role)
    if found is None:
        pytest.skip(f"upstream has no {role} definition for {bound}")
    defs, name = found
    payload = _payload(message, role)
    upstream_valid = not any(
        Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs}).iter_errors(payload)
    )
    ours = _our_payload_errors(method, role, payload)
    assert upstream_valid == (not ours), f"upstream {name}: {upstream_valid}, ours: {ours}"


# --------------------------------------------------------------------------------------------
# Valid cases round-trip through the generated bindings (no dropped fields, no invented nulls)
# --------------------------------------------------------------------------------------------


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


@pytest.mark.parametrize(
    ("relpath", "number", "case"),
    ROUND_TRIP,
    ids=[f"{r}#{n}:{c['description']}" for r, n, c in ROUND_TRIP],
)
def test_valid_case_round_trips_through_bindings(
    relpath: str, number: int, case: dict[str, Any]
) -> None:
    methods = pytest.importorskip("acp_bindings.methods", reason="bindings not generated")
    target = _round_trip_target(case)
    assert target is not None
    role, data = target
    spec = methods.METHODS[case["method"]]
    model = spec.params_model() if role == "params" else spec.result_model()
    dumped = model.model_validate(data).model_dump(by_alias=True, exclude_unset=True, mode="json")
    assert dumped == data
