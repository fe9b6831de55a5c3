"""Every valid wire case in ``schema/cases`` parses into the generated models and dumps back
to exactly the same JSON (``by_alias=True, exclude_unset=True, mode="json"``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp_bindings.methods import METHODS, resolve_model
from acp_schema.codegen_common import SCHEMA_DIR, load_index
from pydantic import BaseModel

CASES_DIR = SCHEMA_DIR / "cases"
ERROR_MODELS = {int(code): entry["def"] for code, entry in load_index()["errors"].items()}


@dataclass(frozen=True)
class Payload:
    """One part of a wire message and the model that must reproduce it."""

    case_id: str
    model_name: str
    data: Any


def _payloads(case_file: Path, position: int, case: dict[str, Any]) -> list[Payload]:
    relpath = case_file.relative_to(CASES_DIR).as_posix()
    base = f"{relpath}[{position}] {case['description']}"
    message, spec = case["message"], METHODS.get(case["method"])
    found: list[Payload] = []
    if "method" in message and "params" in message and spec is not None:
        found.append(Payload(f"{base} params", spec.params_type, message["params"]))
    if "result" in message and spec is not None and spec.result_type is not None:
        found.append(Payload(f"{base} result", spec.result_type, message["result"]))
    error = message.get("error")
    if isinstance(error, dict) and error.get("code") in ERROR_MODELS:
        found.append(Payload(f"{base} error", ERROR_MODELS[error["code"]], error))
    return found


def _collect() -> list[Payload]:
    payloads: list[Payload] = []
    for case_file in sorted(CASES_DIR.rglob("*.json")) if CASES_DIR.is_dir() else []:
        cases = json.loads(case_file.read_text(encoding="utf-8"))
        for position, case in enumerate(cases):
            if case.get("valid") is True:
                payloads.extend(_payloads(case_file, position, case))
    return payloads


PAYLOADS = _collect()


@pytest.mark.skipif(not PAYLOADS, reason="schema/cases/ has no valid wire cases yet")
@pytest.mark.parametrize("payload", PAYLOADS, ids=[p.case_id for p in PAYLOADS])
def test_valid_case_round_trips_exactly(payload: Payload) -> None:
    model: type[BaseModel] = resolve_model(payload.model_name)
    parsed = model.model_validate(payload.data)
    dumped = parsed.model_dump(by_alias=True, exclude_unset=True, mode="json")
    assert dumped == payload.data
    # ``==`` treats 1, 1.0 and True alike; the JSON text does not.
    assert json.dumps(dumped, sort_keys=True) == json.dumps(payload.data, sort_keys=True)


def test_cases_cover_requests_results_and_updates() -> None:
    if not PAYLOADS:
        pytest.skip("schema/cases/ has no valid wire cases yet")
    kinds = {p.case_id.rsplit(" ", 1)[-1] for p in PAYLOADS}
    assert {"params", "result"} <= kinds
    assert any(p.model_name == "SessionNotification" for p in PAYLOADS)
