"""The session/update union is derived from index.json, never edited by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from acp_schema import codegen_derived
from acp_schema.codegen_common import SCHEMA_DIR

UNION_FILE = "notifications/session.update.json"


@pytest.fixture
def schema_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "schema"
    shutil.copytree(SCHEMA_DIR, copy, ignore=shutil.ignore_patterns("cases", "v2", "*.py"))
    return copy


def _union(schema_dir: Path) -> dict[str, Any]:
    document = json.loads((schema_dir / UNION_FILE).read_text(encoding="utf-8"))
    union: dict[str, Any] = document["$defs"]["SessionUpdate"]
    return union


def test_the_committed_union_is_in_sync() -> None:
    assert codegen_derived.stale_derived(SCHEMA_DIR) == {}


def test_a_hand_removed_arm_is_stale_and_restored(schema_copy: Path) -> None:
    original = (schema_copy / UNION_FILE).read_text(encoding="utf-8")
    document = json.loads(original)
    document["$defs"]["SessionUpdate"]["oneOf"].pop(3)
    (schema_copy / UNION_FILE).write_text(codegen_derived.render_json(document), "utf-8")
    assert list(codegen_derived.stale_derived(schema_copy)) == [UNION_FILE]
    assert codegen_derived.write_derived(schema_copy) == [UNION_FILE]
    assert (schema_copy / UNION_FILE).read_text(encoding="utf-8") == original


def test_a_new_index_entry_adds_its_arm(schema_copy: Path) -> None:
    index = json.loads((schema_copy / "index.json").read_text(encoding="utf-8"))
    index["updates"]["mood_update"] = {
        "file": "updates/mood_update.json",
        "def": "SessionUpdateMoodUpdate",
    }
    (schema_copy / "index.json").write_text(json.dumps(index), encoding="utf-8")
    codegen_derived.write_derived(schema_copy)
    refs = [arm["$ref"] for arm in _union(schema_copy)["oneOf"]]
    assert refs[-1] == "../updates/mood_update.json#/$defs/SessionUpdateMoodUpdate"
    assert len(refs) == len(index["updates"])


def test_an_open_union_lists_the_known_tags_in_its_catch_all() -> None:
    catch_all = {
        "title": "other",
        "type": "object",
        "properties": {"sessionUpdate": {"type": "string"}},
        "not": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "sessionUpdate": {"description": "Tag value `old`.", "const": "old"}
                    },
                },
            ]
        },
    }
    union = {"anyOf": [{"$ref": "../updates/old.json#/$defs/Old"}, catch_all]}
    updates = {
        "plan": {"file": "updates/plan.json", "def": "SessionUpdatePlan"},
        "notice": {"file": "updates/notice.json", "def": "SessionUpdateNotice"},
    }
    derived = codegen_derived.derive_union(union, UNION_FILE, updates)
    assert [arm.get("$ref") for arm in derived["anyOf"][:2]] == [
        "../updates/plan.json#/$defs/SessionUpdatePlan",
        "../updates/notice.json#/$defs/SessionUpdateNotice",
    ]
    excluded = derived["anyOf"][2]["not"]["anyOf"]
    assert [arm["properties"]["sessionUpdate"]["const"] for arm in excluded] == ["plan", "notice"]
    assert excluded[1]["properties"]["sessionUpdate"]["description"] == "Tag value `notice`."
    assert catch_all["not"]["anyOf"][0]["properties"]["sessionUpdate"]["const"] == "old"


def test_an_inline_tagged_arm_is_refused_with_a_clear_message() -> None:
    inline = {"properties": {"sessionUpdate": {"const": "plan"}}, "allOf": []}
    with pytest.raises(ValueError, match="inline arm for 'plan'; give it its own file"):
        codegen_derived.derive_union({"oneOf": [inline]}, UNION_FILE, {})
