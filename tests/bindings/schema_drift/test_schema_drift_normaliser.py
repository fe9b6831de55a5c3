"""The drift check on tiny synthetic schema sets: each difference category is detected,
style-only differences are not, and the allowlist (including staleness) works."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from acp_schema import drift
from acp_schema.drift import Finding


def _base_defs() -> dict[str, Any]:
    """A miniature upstream: one method, a tagged union with two arms and an enum."""
    return {
        "PingRequest": {
            "type": "object",
            "properties": {
                "sessionId": {"allOf": [{"$ref": "#/$defs/SessionId"}]},
                "level": {"anyOf": [{"$ref": "#/$defs/Level"}, {"type": "null"}]},
                "note": {"type": ["string", "null"]},
                "count": {"type": "integer"},
            },
            "required": ["sessionId"],
            "x-method": "ping",
            "x-side": "agent",
        },
        "PingResponse": {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "x-method": "ping",
            "x-side": "agent",
        },
        "SessionId": {"type": "string"},
        "Level": {
            "oneOf": [{"type": "string", "const": "low"}, {"type": "string", "const": "high"}]
        },
        "SessionUpdate": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"sessionUpdate": {"type": "string", "const": "text_chunk"}},
                    "required": ["sessionUpdate"],
                    "allOf": [{"$ref": "#/$defs/Chunk"}],
                },
                {
                    "type": "object",
                    "properties": {"sessionUpdate": {"type": "string", "const": "done"}},
                    "required": ["sessionUpdate"],
                },
            ],
            "discriminator": {"propertyName": "sessionUpdate"},
        },
        "Chunk": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "Shape": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"type": "string", "const": "circle"}},
                    "required": ["kind"],
                    "allOf": [{"$ref": "#/$defs/Chunk"}],
                }
            ],
            "discriminator": {"propertyName": "kind"},
        },
        "AgentRequest": {"anyOf": [{"$ref": "#/$defs/PingRequest"}]},
    }


def _write(path: Path, defs: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"$defs": defs}), encoding="utf-8")
    return path


def _findings(tmp_path: Path, changed: dict[str, Any]) -> set[Finding]:
    base = _write(tmp_path / "base.json", _base_defs())
    other = _write(tmp_path / "other.json", changed)
    return set(drift.compare(drift.load_schema_set(base), drift.load_schema_set(other)))


def _categories(findings: set[Finding]) -> set[tuple[str, str]]:
    return {(f.category, f.subject) for f in findings}


def test_identical_sets_have_no_findings(tmp_path: Path) -> None:
    assert _findings(tmp_path, _base_defs()) == set()


def test_wrapper_styles_and_descriptions_are_not_differences(tmp_path: Path) -> None:
    defs = _base_defs()
    props = defs["PingRequest"]["properties"]
    props["sessionId"] = {"$ref": "#/$defs/SessionId", "description": "bare ref, no allOf"}
    props["level"] = {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/Level"}]}
    props["note"] = {"anyOf": [{"type": "string"}, {"type": "null"}], "x-docs-ignore": True}
    defs["Level"] = {"type": "string", "enum": ["high", "low"], "title": "Level"}
    defs["AgentRequest"] = {"anyOf": []}  # routing unions are ignored entirely
    assert _findings(tmp_path, defs) == set()


def test_property_removed(tmp_path: Path) -> None:
    defs = _base_defs()
    del defs["PingRequest"]["properties"]["note"]
    assert _categories(_findings(tmp_path, defs)) == {("property_removed", "PingRequest.note")}


def test_property_added_reports_requiredness(tmp_path: Path) -> None:
    defs = _base_defs()
    defs["Chunk"]["properties"]["messageId"] = {"type": "string"}
    defs["Chunk"]["required"].append("messageId")
    (finding,) = _findings(tmp_path, defs)
    assert (finding.category, finding.subject) == ("property_added", "Chunk.messageId")
    assert "required" in finding.detail


def test_required_changed(tmp_path: Path) -> None:
    defs = _base_defs()
    defs["PingRequest"]["required"] = ["sessionId", "count"]
    (finding,) = _findings(tmp_path, defs)
    assert (finding.category, finding.subject, finding.detail) == (
        "required_changed",
        "PingRequest.count",
        "now required",
    )


def test_enum_value_added_and_removed(tmp_path: Path) -> None:
    defs = _base_defs()
    defs["Level"]["oneOf"] = [
        {"type": "string", "const": "high"},
        {"type": "string", "const": "critical"},
    ]
    assert _findings(tmp_path, defs) == {
        Finding("enum_value_added", "Level", '"critical"'),
        Finding("enum_value_removed", "Level", '"low"'),
    }


def test_enum_opened_to_any_value(tmp_path: Path) -> None:
    defs = _base_defs()
    defs["Level"]["oneOf"].append({"type": "string", "title": "other"})
    assert _findings(tmp_path, defs) == {Finding("enum_value_added", "Level", drift.OTHER_VALUE)}


@pytest.mark.parametrize(
    ("new_schema", "detail"),
    [
        ({"type": "string"}, "integer -> string"),
        ({"type": ["integer", "null"]}, "integer -> integer | null"),
        ({"type": "array", "items": {"type": "integer"}}, "integer -> array<integer>"),
        ({"$ref": "#/$defs/SessionId"}, "integer -> @SessionId"),
    ],
)
def test_type_changed(tmp_path: Path, new_schema: dict[str, Any], detail: str) -> None:
    defs = _base_defs()
    defs["PingRequest"]["properties"]["count"] = new_schema
    assert _findings(tmp_path, defs) == {Finding("type_changed", "PingRequest.count", detail)}


def test_union_arm_added_removed_and_changed(tmp_path: Path) -> None:
    defs = _base_defs()
    arms = defs["Shape"]["oneOf"]
    arms.append(copy.deepcopy(arms[0]))
    arms[1]["properties"]["kind"]["const"] = "square"
    assert _categories(_findings(tmp_path, defs)) == {("union_arm_added", "Shape[square]")}
    arms[0]["allOf"] = [{"$ref": "#/$defs/SessionId"}]
    del arms[1]
    assert _categories(_findings(tmp_path, defs)) == {("union_arm_changed", "Shape[circle]")}
    arms[0]["properties"]["kind"]["const"] = "oval"
    assert _categories(_findings(tmp_path, defs)) == {
        ("union_arm_added", "Shape[oval]"),
        ("union_arm_removed", "Shape[circle]"),
    }


def test_update_kinds_added_and_removed(tmp_path: Path) -> None:
    defs = _base_defs()
    arms = defs["SessionUpdate"]["oneOf"]
    arms[1]["properties"]["sessionUpdate"]["const"] = "finished"
    assert _categories(_findings(tmp_path, defs)) == {
        ("update_kind_added", "finished"),
        ("update_kind_removed", "done"),
    }


def test_methods_and_definitions(tmp_path: Path) -> None:
    defs = _base_defs()
    defs["PingResponse"]["x-side"] = "client"
    defs["PongNotification"] = {"type": "object", "x-method": "pong", "x-side": "client"}
    del defs["Chunk"]
    defs["SessionUpdate"]["oneOf"][0]["allOf"] = []
    defs["Shape"]["oneOf"][0]["allOf"] = []
    assert _categories(_findings(tmp_path, defs)) >= {
        ("method_added", "pong"),
        ("definition_added", "PongNotification"),
        ("definition_removed", "Chunk"),
    }
    found = _findings(tmp_path, defs)
    assert Finding("method_changed", "ping", "side: agent -> agent|client") in found


def _write_folder(root: Path) -> Path:
    """The base set laid out like schema/: several files, cross-file refs, arm definitions."""
    defs = _base_defs()
    arms = defs["SessionUpdate"].pop("oneOf")
    arm_defs = {
        "SessionUpdateTextChunk": arms[0]
        | {"allOf": [{"$ref": "../defs/common.json#/$defs/Chunk"}]},
        "SessionUpdateDone": arms[1],
    }
    defs["SessionUpdate"]["oneOf"] = [
        {"$ref": f"../updates/arms.json#/$defs/{name}"} for name in arm_defs
    ]
    common = {name: defs.pop(name) for name in ("SessionId", "Level", "Chunk", "Shape")}
    common["Shape"]["oneOf"][0]["allOf"] = [{"$ref": "#/$defs/Chunk"}]
    for prop in ("sessionId", "level"):
        text = json.dumps(defs["PingRequest"]["properties"][prop])
        defs["PingRequest"]["properties"][prop] = json.loads(
            text.replace("#/$defs/", "../defs/common.json#/$defs/")
        )
    defs["SessionUpdate"] = defs["SessionUpdate"]
    del defs["AgentRequest"]
    for folder, content in (
        ("defs/common.json", common),
        ("methods/ping.json", {k: defs[k] for k in ("PingRequest", "PingResponse")}),
        ("updates/arms.json", arm_defs),
        ("notifications/update.json", {"SessionUpdate": defs["SessionUpdate"]}),
    ):
        target = root / folder
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"$schema": "x", "title": folder, "$defs": content}))
    (root / "cases").mkdir()
    (root / "cases" / "ignored.json").write_text("[]")
    return root


def test_folder_with_cross_file_refs_matches_single_file(tmp_path: Path) -> None:
    folder = _write_folder(tmp_path / "ours")
    base = _write(tmp_path / "base.json", _base_defs())
    found = drift.compare(drift.load_schema_set(base), drift.load_schema_set(folder))
    # Only the per-kind arm definitions of our layout are extra; the update kinds match.
    assert _categories(set(found)) == {
        ("definition_added", "SessionUpdateTextChunk"),
        ("definition_added", "SessionUpdateDone"),
    }


def test_folder_problems_are_reported(tmp_path: Path) -> None:
    folder = _write_folder(tmp_path / "ours")
    ping = folder / "methods" / "ping.json"
    document = json.loads(ping.read_text())
    document["$defs"]["PingResponse"]["properties"]["ok"] = {
        "$ref": "../defs/common.json#/$defs/Gone"
    }
    ping.write_text(json.dumps(document))
    (folder / "index.json").write_text(
        json.dumps(
            {"methods": {"ping": {"side": "client", "params": "PingRequest", "result": None}}}
        )
    )
    problems = [
        f.detail
        for f in drift.compare(drift.load_schema_set(folder), drift.load_schema_set(folder))
    ]
    assert any("refers to missing Gone" in p for p in problems)
    assert any("x-side 'agent', index says 'client'" in p for p in problems)


def test_duplicate_definition_names_are_refused(tmp_path: Path) -> None:
    folder = _write_folder(tmp_path / "ours")
    (folder / "defs" / "again.json").write_text(
        json.dumps({"$defs": {"Chunk": {"type": "object"}}})
    )
    with pytest.raises(drift.SchemaLoadError, match="Chunk"):
        drift.load_schema_set(folder)


def _allowlist(path: Path, entries: list[dict[str, str]]) -> Path:
    path.write_text(json.dumps({"entries": entries}), encoding="utf-8")
    return path


def test_allowlist_accepts_expected_difference_and_flags_stale_entry(tmp_path: Path) -> None:
    defs = _base_defs()
    defs["ExtraThing"] = {"type": "object"}
    base = _write(tmp_path / "base.json", _base_defs())
    other = _write(tmp_path / "other.json", defs)
    matching = {"category": "definition_added", "subject": "Extra*", "reason": "ours only"}
    report = drift.check(base, other, _allowlist(tmp_path / "ok.json", [matching]))
    assert report.ok
    assert [f.subject for f, _ in report.allowed] == ["ExtraThing"]

    stale = {"category": "property_removed", "subject": "PingRequest.note", "reason": "gone"}
    report = drift.check(base, other, _allowlist(tmp_path / "stale.json", [matching, stale]))
    assert not report.ok
    assert report.differences == []
    assert [(e.category, e.subject) for e in report.stale] == [
        ("property_removed", "PingRequest.note")
    ]
    assert "Stale allowlist entries" in report.to_text()


def test_allowlist_entry_needs_a_reason(tmp_path: Path) -> None:
    bad = _allowlist(tmp_path / "bad.json", [{"category": "definition_added", "subject": "X"}])
    with pytest.raises(drift.SchemaLoadError, match="reason"):
        drift.load_allowlist(bad)


def test_cli_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _write(tmp_path / "base.json", _base_defs())
    assert drift.main(["--upstream", str(base), "--ours", str(base)]) == 0
    assert "No differences" in capsys.readouterr().out

    defs = _base_defs()
    del defs["PingRequest"]["properties"]["count"]
    other = _write(tmp_path / "other.json", defs)
    assert drift.main(["--upstream", str(base), "--ours", str(other), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["differences"] == [
        {"category": "property_removed", "subject": "PingRequest.count", "detail": "integer"}
    ]
    assert drift.main(["--upstream", str(tmp_path / "missing.json"), "--ours", str(base)]) == 2


def test_a_nested_version_folder_is_not_part_of_the_set(tmp_path: Path) -> None:
    """``schema/v2/`` (a folder with its own index.json) must not leak into v1's definitions."""
    ours = tmp_path / "schema"
    (ours / "defs").mkdir(parents=True)
    _write(ours / "defs" / "all.json", _base_defs())
    (ours / "v2" / "defs").mkdir(parents=True)
    _write(ours / "v2" / "defs" / "all.json", _base_defs())
    (ours / "v2" / "index.json").write_text('{"methods": {}}', encoding="utf-8")
    loaded = drift.load_schema_set(ours)  # would raise "defined in both" if v2 were read
    assert set(loaded.definitions) == set(_base_defs())


def test_report_puts_what_upstream_has_and_we_lack_first_with_shapes(tmp_path: Path) -> None:
    upstream = _base_defs()
    ours = copy.deepcopy(upstream)
    del ours["PingRequest"], ours["PingResponse"]  # we lack the method and its definitions
    ours["Extra"] = {"type": "string"}  # we have something upstream lacks
    report = drift.check(
        _write(tmp_path / "upstream.json", upstream), _write(tmp_path / "ours.json", ours)
    )
    text = report.to_text()
    lack, have = text.index("Upstream has, we lack"), text.index("We have, upstream lacks")
    assert lack < have
    method_block = text[text.index("    ping") : have]
    assert "handled by: agent" in method_block
    assert "params PingRequest:" in method_block
    assert "sessionId: @SessionId (required)" in method_block
    assert "level: @Level | null" in method_block
    shapes = {d["subject"]: d.get("shape") for d in report.to_json()["differences"]}
    assert shapes["ping"][0] == "handled by: agent"
    assert shapes["Extra"] is None, "only what we lack carries a shape"


def test_help_states_the_direction(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        drift.main(["--help"])
    text = capsys.readouterr().out
    assert "--upstream is the baseline" in text
    assert "UPSTREAM HAS AND WE LACK" in text
    assert "--scaffold" in text
