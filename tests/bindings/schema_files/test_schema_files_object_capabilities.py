"""``objectCapability`` in index.json: methods gated per object name a real property path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import acp_schema
import pytest
from acp_schema import codegen_tables
from acp_schema.index_rules import object_capability_problems

SCHEMA_ROOT = Path(acp_schema.__file__).resolve().parent
VERSION_FOLDERS = [SCHEMA_ROOT, *(p.parent for p in sorted(SCHEMA_ROOT.glob("*/index.json")))]


@pytest.mark.parametrize("schema_dir", VERSION_FOLDERS, ids=lambda p: p.name)
def test_every_object_capability_names_a_real_property(schema_dir: Path) -> None:
    assert object_capability_problems(schema_dir) == []


def _copy_with_method(tmp_path: Path, object_capability: object) -> Path:
    copy = tmp_path / "schema"
    shutil.copytree(SCHEMA_ROOT, copy, ignore=shutil.ignore_patterns("cases", "v2", "*.py"))
    index = json.loads((copy / "index.json").read_text(encoding="utf-8"))
    # Bind a gated method to existing definitions; only the capability path is under test.
    index["methods"]["tool_call/cancel"] = index["methods"]["session/cancel"] | {
        "objectCapability": object_capability
    }
    (copy / "index.json").write_text(json.dumps(index), encoding="utf-8")
    return copy


def test_a_path_through_references_and_unions_resolves(tmp_path: Path) -> None:
    copy = _copy_with_method(tmp_path, "SessionUpdateToolCallUpdate.toolCallId")
    assert object_capability_problems(copy) == []


def test_a_missing_property_or_definition_is_reported(tmp_path: Path) -> None:
    copy = _copy_with_method(tmp_path, "ToolCallUpdate.capabilities.cancel")
    assert "tool_call/cancel: ToolCallUpdate has no property capabilities.cancel" in (
        object_capability_problems(copy)
    )
    copy = _copy_with_method(tmp_path / "2", "NoSuchThing.cancel")
    assert object_capability_problems(copy) == [
        "tool_call/cancel: objectCapability names missing definition NoSuchThing"
    ]


def test_the_method_table_carries_the_object_capability() -> None:
    index = json.loads((SCHEMA_ROOT / "index.json").read_text(encoding="utf-8"))
    entry = index["methods"]["session/cancel"] | {
        "objectCapability": "ToolCallUpdate.capabilities.cancel"
    }
    index["methods"] = {"tool_call/cancel": entry}
    rendered = codegen_tables.render_methods(index, "acp_bindings")
    assert 'object_capability="ToolCallUpdate.capabilities.cancel",' in rendered
    namespace: dict[str, object] = {}
    exec(compile(rendered, "methods.py", "exec"), namespace)
    spec = namespace["METHODS"]["tool_call/cancel"]  # type: ignore[index]
    assert spec.is_gated and spec.capability is None
    with pytest.raises(ValueError, match="objectCapability"):
        codegen_tables.method_rows({"methods": {"x/y": entry | {"objectCapability": "flat"}}})
