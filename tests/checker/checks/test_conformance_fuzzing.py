"""Schema-driven fuzzing: hypothesis-jsonschema draws from prepared copies of the project's
params schemas, deterministically, and mutations are sorted by real validity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from acp_conformance.checks.robustness import build_cases, defuse_mcp_servers
from acp_conformance.fuzzing import draw, drawn_params, mutations, prepare, resolved_schema
from acp_conformance.validation import load_backend, method_index


def _entry(method: str) -> dict[str, Any]:
    return method_index()[method]


def test_prepare_strips_what_hypothesis_jsonschema_cannot_handle() -> None:
    schema = {
        "type": "object",
        "discriminator": {"propertyName": "type"},
        "unevaluatedProperties": False,
        "description": "annotations go too",
        "properties": {
            # Property *names* that look like keywords are data and stay.
            "format": {"type": "string", "format": "made-up"},
            "discriminator": {"type": "integer", "format": "uint16"},
            "when": {"type": "string", "format": "date-time"},
        },
    }
    prepared = prepare(schema)
    assert set(prepared) == {"type", "properties"}
    assert prepared["properties"]["format"] == {"type": "string"}
    assert prepared["properties"]["discriminator"] == {
        "type": "integer",
        "minimum": 0,
        "maximum": 65535,
    }
    assert prepared["properties"]["when"]["format"] == "date-time"
    assert "discriminator" in schema  # the input is not modified


def test_prepare_merges_all_of_chains_of_plain_objects() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "allOf": [
            {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
            {"anyOf": [{"required": ["c"]}, {"required": ["d"]}]},
        ],
    }
    prepared = prepare(schema)
    assert prepared["required"] == ["a", "b"]
    assert set(prepared["properties"]) == {"a", "b"}
    assert prepared["allOf"] == [{"anyOf": [{"required": ["c"]}, {"required": ["d"]}]}]


def test_draws_are_deterministic_distinct_and_valid() -> None:
    entry = _entry("session/set_config_option")
    schema = resolved_schema(entry["file"], entry["params"])
    first, second = draw(schema, 6), draw(schema, 6)
    assert first == second
    assert len(first) == 6
    assert all(a != b for i, a in enumerate(first) for b in first[i + 1 :])
    for value in first:
        jsonschema.validate(value, schema)
    assert draw(schema, 0) == []


@pytest.mark.parametrize("method", ["initialize", "session/new", "session/prompt", "session/list"])
def test_drawn_params_validate_against_the_real_schema(method: str) -> None:
    backend = load_backend()
    entry = _entry(method)
    values = drawn_params(entry["file"], entry["params"], 4)
    assert values
    assert [backend.validate_params(method, v) for v in values] == [[] for _ in values]
    # Memoised per process, but every caller gets its own copy.
    values[0]["mutated-by-the-test"] = True
    assert "mutated-by-the-test" not in drawn_params(entry["file"], entry["params"], 4)[0]


def test_mutations_are_sorted_by_real_validity() -> None:
    backend = load_backend()
    cases = build_cases("session/new", _entry("session/new"), 3, backend)
    labels = [label for label, _ in cases.invalid]
    assert "missing required cwd" in labels and "params is an array" in labels
    assert all(backend.validate_params("session/new", v) for _, v in cases.invalid)
    assert not any(backend.validate_params("session/new", v) for _, v in cases.valid)


def test_mutations_break_an_example_in_the_expected_ways() -> None:
    schema = {"type": "object", "required": ["sessionId"], "properties": {}}
    found = dict(mutations(schema, {"sessionId": "s"}))
    assert found["missing required sessionId"] == {}
    assert found["sessionId has the wrong type"] == {"sessionId": 12345}
    assert "acpConformanceJunk" in found["an unknown extra field"]
    assert found["params is a string"] == "params"


def test_drawn_mcp_servers_are_defused(tmp_path: Path) -> None:
    class Ctx:
        work = tmp_path

    params = {
        "cwd": "/",
        "mcpServers": [
            {"name": "a", "command": "rm", "args": ["-rf", "/"], "env": []},
            {"type": "http", "name": "b", "url": "https://example.com", "headers": []},
            "not-an-object",
        ],
    }
    defused = defuse_mcp_servers(params, Ctx())  # type: ignore[arg-type]
    stdio, http, junk = defused["mcpServers"]
    assert stdio["command"] == str(tmp_path / "no-such-mcp-server")
    assert stdio["args"] == ["-rf", "/"]
    assert http["url"] == "http://127.0.0.1:9/mcp"
    assert junk == "not-an-object"
    assert params["mcpServers"][0]["command"] == "rm"  # the draw itself is untouched
