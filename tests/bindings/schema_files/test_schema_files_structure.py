"""Structural checks of the schema files: they are valid, complete and agree with index.json."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from acp_schema import (
    BASE_URI,
    SCHEMA_FOLDERS,
    definition_uri,
    iter_documents,
    load_document,
    load_index,
    registry,
)
from jsonschema import Draft202012Validator

DRAFT = "https://json-schema.org/draft/2020-12/schema"
DOCUMENTS = dict(iter_documents())


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
    index = load_index()
    for entry in index["methods"].values():
        yield entry["file"], entry["params"]
        if entry["result"] is not None:
            yield entry["file"], entry["result"]
    for entry in index["updates"].values():
        yield entry["file"], entry["def"]
    for entry in index["errors"].values():
        yield entry["file"], entry["def"]


def test_documents_are_found_only_in_schema_folders() -> None:
    assert len(DOCUMENTS) > 50
    for relpath in DOCUMENTS:
        assert relpath.split("/")[0] in SCHEMA_FOLDERS
        assert "allowlist" not in relpath
    assert "index.json" not in DOCUMENTS


@pytest.mark.parametrize("relpath", sorted(DOCUMENTS))
def test_document_has_the_required_frame(relpath: str) -> None:
    document = DOCUMENTS[relpath]
    assert document["$schema"] == DRAFT
    assert isinstance(document["title"], str) and document["title"]
    assert isinstance(document["description"], str) and document["description"]
    assert "$id" not in document
    assert isinstance(document["$defs"], dict) and document["$defs"]
    assert set(document) == {"$schema", "title", "description", "$defs"}


@pytest.mark.parametrize("relpath", sorted(DOCUMENTS))
def test_document_is_valid_draft_2020_12(relpath: str) -> None:
    Draft202012Validator.check_schema(DOCUMENTS[relpath])


@pytest.mark.parametrize("relpath", sorted(DOCUMENTS))
def test_every_ref_resolves_and_is_relative(relpath: str) -> None:
    resolver = registry().resolver(BASE_URI + relpath)
    for ref in _refs(DOCUMENTS[relpath]):
        assert not ref.startswith(("http:", "https:", "/")), ref
        assert "#/$defs/" in ref, ref
        resolved = resolver.lookup(ref)
        assert isinstance(resolved.contents, dict), ref


def test_each_definition_is_defined_exactly_once() -> None:
    counts = Counter(name for document in DOCUMENTS.values() for name in document["$defs"])
    assert [name for name, count in counts.items() if count > 1] == []


def test_every_name_in_the_index_exists_in_its_file() -> None:
    for relpath, name in _named_in_index():
        assert name in load_document(relpath)["$defs"], (relpath, name)
    extensions = load_index()["extensions"]["file"]
    assert {"IacCodeUsage", "IacCodePromptResponseMeta", "IacCodeMeta"} <= set(
        load_document(extensions)["$defs"]
    )


def test_definition_uris_resolve_in_the_registry() -> None:
    for relpath, name in _named_in_index():
        resolved = registry().resolver().lookup(definition_uri(relpath, name))
        assert resolved.contents is load_document(relpath)["$defs"][name]


def test_method_definitions_carry_upstream_markers() -> None:
    for wire, entry in load_index()["methods"].items():
        canonical = entry["aliasOf"] or wire
        defs = load_document(entry["file"])["$defs"]
        names = [entry["params"]] + ([entry["result"]] if entry["result"] else [])
        for name in names:
            assert defs[name]["x-method"] == canonical, (wire, name)
            assert defs[name]["x-side"] == entry["side"], (wire, name)


def test_aliases_reuse_the_canonical_files() -> None:
    methods = load_index()["methods"]
    for entry in methods.values():
        if entry["aliasOf"] is not None:
            canonical = methods[entry["aliasOf"]]
            assert (entry["file"], entry["params"], entry["result"]) == (
                canonical["file"],
                canonical["params"],
                canonical["result"],
            )


def test_every_update_kind_has_a_tagged_arm_in_its_own_file() -> None:
    updates = load_index()["updates"]
    files = {relpath for relpath in DOCUMENTS if relpath.startswith("updates/")}
    assert {entry["file"] for entry in updates.values()} == files
    assert all(entry["file"] == f"updates/{kind}.json" for kind, entry in updates.items())
    for kind, entry in updates.items():
        arm = load_document(entry["file"])["$defs"][entry["def"]]
        assert arm["type"] == "object"
        assert arm["required"] == ["sessionUpdate"]
        assert arm["properties"]["sessionUpdate"] == {
            "description": arm["properties"]["sessionUpdate"]["description"],
            "type": "string",
            "const": kind,
        }
        assert len(arm["allOf"]) == 1 and "$ref" in arm["allOf"][0]


def test_session_update_union_lists_every_arm_once() -> None:
    union = load_document("notifications/session.update.json")["$defs"]["SessionUpdate"]
    assert union["discriminator"] == {"propertyName": "sessionUpdate"}
    expected = {
        f"../{entry['file']}#/$defs/{entry['def']}" for entry in load_index()["updates"].values()
    }
    refs = [arm["$ref"] for arm in union["oneOf"]]
    assert len(refs) == len(expected) and set(refs) == expected


def test_error_objects_pin_their_code() -> None:
    for code, entry in load_index()["errors"].items():
        error = load_document(entry["file"])["$defs"][entry["def"]]
        assert error["properties"]["code"]["const"] == int(code)
        assert error["required"] == ["code", "message"]


def test_session_capabilities_offer_fork() -> None:
    capabilities = load_document("defs/capabilities.json")["$defs"]
    fork = capabilities["SessionCapabilities"]["properties"]["fork"]
    assert fork["anyOf"] == [{"$ref": "#/$defs/SessionForkCapabilities"}, {"type": "null"}]
    assert capabilities["SessionForkCapabilities"]["type"] == "object"


def _describable(node: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Yield every property schema below ``node`` (through unions, allOf, items, not)."""
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
        for where, schema in _describable(definition, name):
            if "/not" in where:
                continue  # exclusion patterns of open unions restate tags only
            assert isinstance(schema, dict) and schema.get("description"), where
