"""The maintainer recipe for "upstream adds a method and an update kind", end to end.

On a temporary copy of ``schema/``: synthesise a NEW upstream (the newest v1 plus one method
and one update kind), run ``drift --scaffold``, generate the bindings, then run the schema
and case tests of the copy in a fresh interpreter. The only failure must be the TODO test,
naming exactly the scaffolded files — at most five files for a human to edit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp_schema
import pytest
from acp_schema import codegen, drift, reference, scaffold
from acp_schema.codegen_common import Target

TESTS = Path(__file__).resolve().parents[1]
OURS = Path(acp_schema.__file__).resolve().parent
UPSTREAM = reference.newest_upstream("v1")

pytestmark = [pytest.mark.reference, pytest.mark.subprocess]

SCAFFOLDED = {
    "methods/session.summarize.json",
    "updates/mood_update.json",
    "cases/methods/session.summarize.json",
    "cases/updates/mood_update.json",
}


def synthesise_new_upstream(path: Path) -> None:
    """The newest upstream plus ``session/summarize`` and the ``mood_update`` kind."""
    document: dict[str, Any] = json.loads(UPSTREAM.read_text(encoding="utf-8"))
    defs = document["$defs"]
    marks = {"x-method": "session/summarize", "x-side": "agent"}
    defs["SummarizeSessionRequest"] = marks | {
        "type": "object",
        "properties": {
            "sessionId": {"allOf": [{"$ref": "#/$defs/SessionId"}]},
            "style": {"allOf": [{"$ref": "#/$defs/SummaryStyle"}]},
            "maxWords": {"type": ["integer", "null"], "minimum": 1},
        },
        "required": ["sessionId", "style"],
    }
    defs["SummarizeSessionResponse"] = marks | {
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
    }
    defs["SummaryStyle"] = {"type": "string", "enum": ["brief", "detailed"]}
    defs["MoodUpdate"] = {
        "type": "object",
        "properties": {
            "mood": {"allOf": [{"$ref": "#/$defs/Mood"}]},
            "note": {"type": ["string", "null"]},
        },
        "required": ["mood"],
    }
    defs["Mood"] = {"type": "string", "enum": ["calm", "busy"]}
    defs["SessionUpdate"]["oneOf"].append(
        {
            "type": "object",
            "properties": {"sessionUpdate": {"type": "string", "const": "mood_update"}},
            "required": ["sessionUpdate"],
            "allOf": [{"$ref": "#/$defs/MoodUpdate"}],
        }
    )
    path.write_text(json.dumps(document), encoding="utf-8")


def test_scaffold_then_pytest_names_exactly_the_todos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference.require(UPSTREAM)
    new_upstream = tmp_path / "new-upstream.json"
    synthesise_new_upstream(new_upstream)
    packages = tmp_path / "packages"
    schema = packages / "acp_schema"
    shutil.copytree(OURS, schema, ignore=shutil.ignore_patterns("v2", "__pycache__"))

    # 1. drift lists what upstream has and we lack, with field shapes; --scaffold writes it.
    args = ["--upstream", str(new_upstream), "--ours", str(schema)]
    args += ["--allowlist", str(OURS / "drift-allowlist.json")]
    report = drift.check(new_upstream, schema, OURS / "drift-allowlist.json")
    lacking = {(f.category, f.subject) for f in report.differences}
    assert ("method_removed", "session/summarize") in lacking
    assert ("update_kind_removed", "mood_update") in lacking
    assert "style: @SummaryStyle (required)" in report.to_text()
    capsys.readouterr()
    assert drift.main([*args, "--scaffold"]) == 0
    printed = capsys.readouterr().out
    assert drift.check(new_upstream, schema, OURS / "drift-allowlist.json").ok

    # 2. the files a human edits: the scaffolded ones (named by their TODOs) and the one
    # setting naming the newest upstream — five, all named by the scaffold's summary.
    files_with_todos = {entry.split(":", 1)[0] for entry in scaffold.todos(schema)}
    assert files_with_todos == SCAFFOLDED
    assert all(f"  {relpath}" in printed for relpath in SCAFFOLDED)
    assert "NEWEST_UPSTREAM['v1'] in schema/reference.py" in printed
    assert len(files_with_todos) + 1 <= 5

    # 3. regenerate the bindings of the copy (the union arm and method come from the index).
    target = Target("v1", "", "acp_bindings", schema_root=schema, generated_root=packages)
    files = codegen.build(target)
    codegen.write_tree(files, target.output_dir)
    assert '"mood_update": "SessionUpdateMoodUpdate"' in files["methods.py"]
    assert "async def session_summarize(" in files["agent.py"]

    # 4. the copy's schema and case tests: only the TODO test fails, naming the four files.
    tests = tmp_path / "tests"
    tests.mkdir()
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    reference: needs ../shared/reference\n", encoding="utf-8"
    )
    for name in ("schema_files/test_schema_files_todos.py", "schema_cases/test_schema_cases.py"):
        shutil.copy(TESTS / name, tests / Path(name).name)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ACP_REFERENCE")}
    environment["PYTHONPATH"] = str(packages)
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", str(tests)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = completed.stdout
    assert completed.returncode == 1, output[-3000:]
    assert re.search(r"\b1 failed\b", output), output[-3000:]
    assert "test_no_scaffold_todo_is_left" in output
    named = set(re.findall(r"^E\s+((?:cases/)?(?:methods|updates)/[\w.]+\.json):", output, re.M))
    assert named == SCAFFOLDED, output[-3000:]
