"""Structure of schema/v2/: the same frame and rules as v1, and no mixing of the two sets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from acp_schema import (
    SCHEMA_FOLDERS,
    SUPPORTED_VERSIONS,
    base_uri,
    definition_uri,
    iter_documents,
    load_document,
    load_index,
    registry,
)
from jsonschema import Draft202012Validator

V2 = 2
DRAFT = "https://json-schema.org/draft/2020-12/schema"
DOCUMENTS = dict(iter_documents(version=V2))


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _named_in_index() -> Iterator[tuple[str, str]]:
    index = load_index(version=V2)
    for entry in index["methods"].values():
        yield entry["file"], entry["params"]
        if entry["result"] is not None:
            yield entry["file"], entry["result"]
    for entry in index["updates"].values():
        yield entry["file"], entry["def"]
    for entry in index["errors"].values():
        yield entry["file"], entry["def"]


def test_versions_are_kept_apart() -> None:
    assert SUPPORTED_VERSIONS == (1, 2)
    assert load_index()["protocolVersion"] == 1
    assert load_index(version=V2)["protocolVersion"] == V2
    v1_names = {name for _, doc in iter_documents() for name in doc["$defs"]}
    assert "UpdateSessionNotification" in {n for d in DOCUMENTS.values() for n in d["$defs"]}
    assert "UpdateSessionNotification" not in v1_names
    assert base_uri(1) != base_uri(V2)
    with pytest.raises(ValueError, match="protocol version 3"):
        load_index(version=3)


def test_documents_are_found_only_in_schema_folders() -> None:
    assert len(DOCUMENTS) > 50
    for relpath in DOCUMENTS:
        assert relpath.split("/")[0] in SCHEMA_FOLDERS


@pytest.mark.parametrize("relpath", sorted(DOCUMENTS))
def test_document_has_the_frame_and_is_valid_2020_12(relpath: str) -> None:
    document = DOCUMENTS[relpath]
    assert set(document) == {"$schema", "title", "description", "$defs"}
    assert document["$schema"] == DRAFT
    assert document["title"] and document["description"] and document["$defs"]
    Draft202012Validator.check_schema(document)


@pytest.mark.parametrize("relpath", sorted(DOCUMENTS))
def test_every_ref_resolves_inside_v2(relpath: str) -> None:
    resolver = registry(version=V2).resolver(base_uri(V2) + relpath)
    for ref in _refs(DOCUMENTS[relpath]):
        assert not ref.startswith(("http:", "https:", "/")), ref
        assert "#/$defs/" in ref, ref
        resolved = resolver.lookup(ref)
        assert isinstance(resolved.contents, dict), ref
        assert resolved.resolver.lookup("").contents is not None
        assert "/v1/" not in str(resolver.lookup(ref).contents)


def test_each_definition_is_defined_exactly_once() -> None:
    counts = Counter(name for document in DOCUMENTS.values() for name in document["$defs"])
    assert [name for name, count in counts.items() if count > 1] == []


def test_every_name_in_the_index_exists_and_resolves() -> None:
    for relpath, name in _named_in_index():
        assert name in load_document(relpath, version=V2)["$defs"], (relpath, name)
        resolved = registry(version=V2).resolver().lookup(definition_uri(relpath, name, V2))
        assert resolved.contents is load_document(relpath, version=V2)["$defs"][name]


def test_method_definitions_carry_upstream_markers() -> None:
    for wire, entry in load_index(version=V2)["methods"].items():
        defs = load_document(entry["file"], version=V2)["$defs"]
        for name in [entry["params"]] + ([entry["result"]] if entry["result"] else []):
            assert defs[name]["x-method"] == wire, (wire, name)
            assert defs[name]["x-side"] == entry["side"], (wire, name)


def test_v2_drops_and_adds_the_expected_methods() -> None:
    methods = set(load_index(version=V2)["methods"])
    # The newest draft (npm SDK 2.4.0) adds per-item cancellation; alpha.3 had none.
    assert {"auth/login", "auth/logout", "tool_call/cancel", "terminal/cancel"} <= methods
    dropped = {"authenticate", "session/load", "session/set_mode", "fs/read_text_file"}
    assert dropped.isdisjoint(methods)


def test_session_update_union_lists_every_arm_once_plus_a_catch_all() -> None:
    union = load_document("notifications/session.update.json", version=V2)["$defs"]["SessionUpdate"]
    expected = {
        f"../{entry['file']}#/$defs/{entry['def']}"
        for entry in load_index(version=V2)["updates"].values()
    }
    refs = [arm["$ref"] for arm in union["anyOf"] if "$ref" in arm]
    assert len(refs) == len(expected) and set(refs) == expected
    catch_all = [arm for arm in union["anyOf"] if "$ref" not in arm]
    assert len(catch_all) == 1 and "not" in catch_all[0]
    for kind, entry in load_index(version=V2)["updates"].items():
        arm = load_document(entry["file"], version=V2)["$defs"][entry["def"]]
        assert arm["properties"]["sessionUpdate"]["const"] == kind
        assert arm["required"] == ["sessionUpdate"]


def test_error_objects_pin_their_code() -> None:
    errors = load_index(version=V2)["errors"]
    assert {"-32002", "-32022"} <= set(errors)  # -32022 is new in the newest draft
    for code, entry in errors.items():
        error = load_document(entry["file"], version=V2)["$defs"][entry["def"]]
        assert error["properties"]["code"]["const"] == int(code)
        assert error["required"] == ["code", "message"]


def _describable(node: Any, where: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, list):
        for position, item in enumerate(node):
            yield from _describable(item, f"{where}[{position}]")
        return
    if not isinstance(node, dict):
        return
    for name, schema in (node.get("properties") or {}).items():
        yield f"{where}.{name}", schema
        yield from _describable(schema, f"{where}.{name}")
    for keyword in ("allOf", "anyOf", "oneOf", "not", "items", "additionalProperties"):
        if keyword in node:
            yield from _describable(node[keyword], f"{where}/{keyword}")


@pytest.mark.parametrize("relpath", sorted(DOCUMENTS))
def test_every_definition_and_property_is_described(relpath: str) -> None:
    for name, definition in DOCUMENTS[relpath]["$defs"].items():
        assert definition.get("description"), name
        assert "\n" not in definition["description"], name
        assert "TODO" not in definition["description"], name
        for where, schema in _describable(definition, name):
            if "/not" in where:
                continue
            assert isinstance(schema, dict) and schema.get("description"), where
