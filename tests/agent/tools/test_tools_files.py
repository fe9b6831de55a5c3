"""read_file, list_files, glob, grep, write_file and edit_file on real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from iac_code.tools.contract import AccessKind, ToolContext
from iac_code.tools.edit_file import EditFileTool
from iac_code.tools.glob_files import GlobTool
from iac_code.tools.grep_search import GrepTool, Match, parse_rg_event
from iac_code.tools.list_files import ListFilesTool
from iac_code.tools.read_file import ReadFileTool
from iac_code.tools.write_file import WriteFileTool

pytestmark = pytest.mark.anyio


# --- read_file -------------------------------------------------------------------------------


async def test_read_file_numbers_lines(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "main.tf").write_text('resource "a" "b" {\n  x = 1\n}\n')
    outcome = await ReadFileTool().run({"path": "main.tf"}, ctx)
    assert not outcome.is_error
    assert outcome.model_content.splitlines() == [
        '     1\tresource "a" "b" {',
        "     2\t  x = 1",
        "     3\t}",
    ]
    assert outcome.raw_output["lineCount"] == 3
    assert outcome.raw_output["moreLines"] is False


async def test_read_file_offset_and_limit(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    outcome = await ReadFileTool().run({"path": "long.txt", "offset": 10, "limit": 3}, ctx)
    lines = outcome.model_content.splitlines()
    assert lines[:3] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    assert "continue with offset=13" in lines[3]


async def test_read_file_default_limit_caps_lines(workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"{n}\n" for n in range(50)))
    ctx = ToolContext.for_session(workspace).with_limits(read_default_lines=20)
    outcome = await ReadFileTool().run({"path": "big.txt"}, ctx)
    assert outcome.raw_output["lineCount"] == 20
    assert "more lines follow" in outcome.model_content


async def test_read_file_result_cap_adds_truncation_note(workspace: Path) -> None:
    (workspace / "wide.txt").write_text("x" * 200 + "\n" + "y" * 200 + "\n")
    ctx = ToolContext.for_session(workspace).with_limits(result_cap_chars=100)
    outcome = await ReadFileTool().run({"path": "wide.txt"}, ctx)
    assert outcome.model_content.endswith("more characters]")
    assert "[output truncated: " in outcome.model_content


async def test_read_file_cuts_very_long_lines(workspace: Path) -> None:
    (workspace / "min.json").write_text("{" + "a" * 5000 + "}\n")
    ctx = ToolContext.for_session(workspace).with_limits(line_max_chars=100)
    outcome = await ReadFileTool().run({"path": "min.json"}, ctx)
    assert "[line truncated:" in outcome.model_content
    assert len(outcome.model_content) < 400


async def test_read_file_refuses_binary(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "plugin.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    outcome = await ReadFileTool().run({"path": "plugin.bin"}, ctx)
    assert outcome.is_error
    assert "binary" in outcome.model_content


async def test_read_file_accepts_latin1_text(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "legacy.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    outcome = await ReadFileTool().run({"path": "legacy.txt"}, ctx)
    assert not outcome.is_error
    assert "caf" in outcome.model_content


async def test_read_file_errors(workspace: Path, ctx: ToolContext) -> None:
    missing = await ReadFileTool().run({"path": "nope.tf"}, ctx)
    assert missing.is_error and "not found" in missing.model_content
    directory = await ReadFileTool().run({"path": "."}, ctx)
    assert directory.is_error and "directory" in directory.model_content
    (workspace / "empty.txt").write_text("")
    empty = await ReadFileTool().run({"path": "empty.txt"}, ctx)
    assert empty.model_content == "(empty file)"


class FakeFs:
    """An in-test client: fs/read_text_file and fs/write_text_file against a dict."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.reads: list[tuple[str, int | None, int | None]] = []
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(self, path: str, line: int | None, limit: int | None) -> str:
        self.reads.append((path, line, limit))
        if path not in self.files:
            raise FileNotFoundError(path)
        lines = self.files[path].splitlines(keepends=True)
        start = (line or 1) - 1
        chosen = lines[start:] if limit is None else lines[start : start + limit]
        return "".join(chosen)

    async def write_text_file(self, path: str, content: str) -> None:
        self.writes.append((path, content))
        self.files[path] = content


async def test_read_file_goes_through_client_fs(workspace: Path) -> None:
    path = os.fspath(workspace / "main.tf")
    fs = FakeFs({path: "unsaved 1\nunsaved 2\nunsaved 3\n"})
    ctx = ToolContext.for_session(workspace, fs_read=fs)
    outcome = await ReadFileTool().run({"path": "main.tf", "offset": 2, "limit": 1}, ctx)
    assert fs.reads == [(path, 2, 2)]  # one extra line to learn whether more follow
    assert outcome.model_content.splitlines()[0] == "     2\tunsaved 2"
    assert outcome.raw_output["source"] == "client"
    assert outcome.raw_output["moreLines"] is True


async def test_read_file_client_error_is_an_error_outcome(workspace: Path) -> None:
    ctx = ToolContext.for_session(workspace, fs_read=FakeFs({}))
    outcome = await ReadFileTool().run({"path": "absent.tf"}, ctx)
    assert outcome.is_error and "through the client" in outcome.model_content


async def test_read_file_locations_and_access(
    workspace: Path, outside: Path, ctx: ToolContext
) -> None:
    tool = ReadFileTool()
    assert tool.locations({"path": "a.tf", "offset": 5}, ctx) == [
        {"path": os.fspath(workspace / "a.tf"), "line": 5}
    ]
    inside = await tool.access({"path": "a.tf"}, ctx)
    assert inside.kind is AccessKind.READ and not inside.restricted
    escaped = await tool.access({"path": "../outside/x"}, ctx)
    assert escaped.outside_workspace and escaped.reasons
    secret = await tool.access({"path": ".env"}, ctx)
    assert secret.sensitive


# --- list_files ------------------------------------------------------------------------------


async def test_list_files_sorted_with_directories_marked(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "b.tf").write_text("")
    (workspace / "a.tf").write_text("")
    (workspace / "modules").mkdir()
    outcome = await ListFilesTool().run({}, ctx)
    assert outcome.model_content.splitlines() == ["a.tf", "b.tf", "modules/"]
    assert outcome.raw_output["entryCount"] == 3


async def test_list_files_cap_and_errors(workspace: Path) -> None:
    for index in range(12):
        (workspace / f"f{index:02}.txt").write_text("")
    ctx = ToolContext.for_session(workspace).with_limits(list_max_entries=5)
    outcome = await ListFilesTool().run({"path": "."}, ctx)
    assert outcome.model_content.splitlines()[:5] == [f"f{i:02}.txt" for i in range(5)]
    assert "[listing truncated: 7 more entries]" in outcome.model_content
    missing = await ListFilesTool().run({"path": "nope"}, ctx)
    assert missing.is_error
    a_file = await ListFilesTool().run({"path": "f00.txt"}, ctx)
    assert a_file.is_error


# --- glob ------------------------------------------------------------------------------------


def _tree(root: Path, files: list[str]) -> None:
    for relative in files:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"content of {relative}\n")


async def test_glob_recursive_sorted_relative(workspace: Path, ctx: ToolContext) -> None:
    _tree(workspace, ["main.tf", "modules/vpc/main.tf", "modules/vpc/vars.tf", "README.md",
                      ".git/config.tf"])  # fmt: skip
    outcome = await GlobTool().run({"pattern": "**/*.tf"}, ctx)
    assert outcome.model_content.splitlines() == [
        "main.tf",
        "modules/vpc/main.tf",
        "modules/vpc/vars.tf",
    ]
    top_only = await GlobTool().run({"pattern": "*.tf"}, ctx)
    assert top_only.model_content.splitlines() == ["main.tf"]
    relative_to_base = await GlobTool().run({"pattern": "*.tf", "path": "modules/vpc"}, ctx)
    assert relative_to_base.model_content.splitlines() == ["main.tf", "vars.tf"]


async def test_glob_braces_and_directories(workspace: Path, ctx: ToolContext) -> None:
    _tree(workspace, ["a.yaml", "b.yml", "c.json", "envs/prod/x.tf"])
    outcome = await GlobTool().run({"pattern": "*.{yaml,yml}"}, ctx)
    assert outcome.model_content.splitlines() == ["a.yaml", "b.yml"]
    dirs = await GlobTool().run({"pattern": "envs/*"}, ctx)
    assert dirs.model_content.splitlines() == ["envs/prod/"]


async def test_glob_caps_results(workspace: Path) -> None:
    _tree(workspace, [f"f{i:02}.tf" for i in range(10)])
    ctx = ToolContext.for_session(workspace).with_limits(glob_max_results=4)
    outcome = await GlobTool().run({"pattern": "*.tf"}, ctx)
    assert outcome.model_content.splitlines()[:4] == ["f00.tf", "f01.tf", "f02.tf", "f03.tf"]
    assert "[results truncated: 6 more matches]" in outcome.model_content
    assert outcome.raw_output["truncated"] is True


async def test_glob_does_not_follow_symlinked_directories(
    workspace: Path, outside: Path, ctx: ToolContext
) -> None:
    _tree(outside, ["secret.tf"])
    (workspace / "escape").symlink_to(outside, target_is_directory=True)
    outcome = await GlobTool().run({"pattern": "**/*.tf"}, ctx)
    assert outcome.model_content == "(no matches)"


# --- grep ------------------------------------------------------------------------------------


async def test_grep_finds_lines_sorted(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "b.tf").write_text('variable "region" {}\nregion = "x"\n')
    (workspace / "a.tf").write_text('provider "aws" {\n  region = var.region\n}\n')
    outcome = await GrepTool(ripgrep=False).run({"pattern": r"region\s*="}, ctx)
    assert outcome.model_content.splitlines() == [
        "a.tf:2:  region = var.region",
        'b.tf:2:region = "x"',
    ]


async def test_grep_glob_filter_case_and_single_file(workspace: Path, ctx: ToolContext) -> None:
    _tree(workspace, ["modules/net/main.tf", "docs/notes.md"])
    (workspace / "modules/net/main.tf").write_text("Resource one\n")
    (workspace / "docs/notes.md").write_text("resource two\n")
    tool = GrepTool(ripgrep=False)
    filtered = await tool.run(
        {"pattern": "resource", "glob": "*.tf", "case_insensitive": True}, ctx
    )
    assert filtered.model_content.splitlines() == ["modules/net/main.tf:1:Resource one"]
    case_sensitive = await tool.run({"pattern": "resource"}, ctx)
    assert case_sensitive.model_content.splitlines() == ["docs/notes.md:1:resource two"]
    one_file = await tool.run({"pattern": "two", "path": "docs/notes.md"}, ctx)
    assert one_file.model_content.splitlines() == ["docs/notes.md:1:resource two"]


async def test_grep_skips_binary_git_and_sensitive(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "app.bin").write_bytes(b"token\x00\x00binary")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("token in git\n")
    (workspace / ".env").write_text("token=supersecret\n")
    (workspace / "ok.txt").write_text("token here\n")
    outcome = await GrepTool(ripgrep=False).run({"pattern": "token"}, ctx)
    lines = outcome.model_content.splitlines()
    assert lines[0] == "ok.txt:1:token here"
    assert "supersecret" not in outcome.model_content
    assert "sensitive files" in lines[1]


async def test_grep_skips_symlinks_leading_outside(
    workspace: Path, outside: Path, ctx: ToolContext
) -> None:
    (outside / "private.txt").write_text("needle outside\n")
    (workspace / "alias.txt").symlink_to(outside / "private.txt")
    (workspace / "inside.txt").write_text("needle inside\n")
    outcome = await GrepTool(ripgrep=False).run({"pattern": "needle"}, ctx)
    assert outcome.model_content.splitlines() == ["inside.txt:1:needle inside"]


async def test_grep_caps_and_errors(workspace: Path) -> None:
    (workspace / "many.txt").write_text("hit\n" * 20)
    ctx = ToolContext.for_session(workspace).with_limits(grep_max_matches=5)
    tool = GrepTool(ripgrep=False)
    outcome = await tool.run({"pattern": "hit"}, ctx)
    assert len([line for line in outcome.model_content.splitlines() if line.endswith(":hit")]) == 5
    assert "[results truncated at 5 matches" in outcome.model_content
    bad = await tool.run({"pattern": "("}, ctx)
    assert bad.is_error and "Invalid regular expression" in bad.model_content
    missing = await tool.run({"pattern": "x", "path": "nowhere"}, ctx)
    assert missing.is_error


async def test_grep_falls_back_when_ripgrep_is_unusable(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "a.txt").write_text("needle\n")
    outcome = await GrepTool(ripgrep="/nonexistent/rg").run({"pattern": "needle"}, ctx)
    assert outcome.model_content == "a.txt:1:needle"
    assert outcome.raw_output["engine"] == "python"


def test_parse_rg_event_reads_match_events() -> None:
    line = (
        b'{"type":"match","data":{"path":{"text":"/w/a.tf"},"lines":{"text":"x = 1\\n"},'
        b'"line_number":7,"absolute_offset":0,"submatches":[]}}'
    )
    assert parse_rg_event(line) == Match(Path("/w/a.tf"), 7, "x = 1")
    assert parse_rg_event(b'{"type":"begin","data":{}}') is None
    assert parse_rg_event(b"not json") is None


@pytest.mark.skipif(not __import__("shutil").which("rg"), reason="ripgrep not installed")
async def test_grep_ripgrep_and_python_agree(workspace: Path, ctx: ToolContext) -> None:
    _tree(workspace, ["a.tf", "sub/b.tf", "c.md"])
    (workspace / ".env").write_text("content of secret\n")
    with_rg = await GrepTool(ripgrep=True).run({"pattern": "content", "glob": "*.tf"}, ctx)
    without = await GrepTool(ripgrep=False).run({"pattern": "content", "glob": "*.tf"}, ctx)
    assert with_rg.model_content == without.model_content


# --- write_file ------------------------------------------------------------------------------


def _leftovers(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.endswith(".tmp")]


async def test_write_file_creates_with_diff_and_no_temp_files(
    workspace: Path, ctx: ToolContext
) -> None:
    outcome = await WriteFileTool().run({"path": "envs/dev/main.tf", "content": "a = 1\n"}, ctx)
    target = workspace / "envs/dev/main.tf"
    assert target.read_text() == "a = 1\n"
    assert outcome.content == [
        {"type": "diff", "path": os.fspath(target), "oldText": None, "newText": "a = 1\n"}
    ]
    assert outcome.raw_output["created"] is True
    assert _leftovers(target.parent) == []
    assert "Created" in outcome.model_content


async def test_write_file_overwrite_preserves_mode(workspace: Path, ctx: ToolContext) -> None:
    script = workspace / "deploy.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    outcome = await WriteFileTool().run({"path": "deploy.sh", "content": "echo new\n"}, ctx)
    assert script.read_text() == "echo new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert outcome.content[0]["oldText"] == "echo old\n"
    assert _leftovers(workspace) == []


async def test_write_file_new_file_gets_umask_mode(workspace: Path, ctx: ToolContext) -> None:
    old_mask = os.umask(0o022)
    try:
        await WriteFileTool().run({"path": "new.tf", "content": ""}, ctx)
    finally:
        os.umask(old_mask)
    assert stat.S_IMODE((workspace / "new.tf").stat().st_mode) == 0o644


async def test_write_file_through_symlink_keeps_link(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "real.tf").write_text("old\n")
    (workspace / "link.tf").symlink_to(workspace / "real.tf")
    await WriteFileTool().run({"path": "link.tf", "content": "new\n"}, ctx)
    assert (workspace / "link.tf").is_symlink()
    assert (workspace / "real.tf").read_text() == "new\n"


async def test_write_file_failure_leaves_no_temp(
    workspace: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "x.tf").write_text("old\n")

    def failing_replace(source: str, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("iac_code.tools.file_io.os.replace", failing_replace)
    outcome = await WriteFileTool().run({"path": "x.tf", "content": "new\n"}, ctx)
    assert outcome.is_error and "Could not write" in outcome.model_content
    assert (workspace / "x.tf").read_text() == "old\n"
    assert _leftovers(workspace) == []


async def test_write_file_refuses_directory(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "dir").mkdir()
    outcome = await WriteFileTool().run({"path": "dir", "content": "x"}, ctx)
    assert outcome.is_error


async def test_write_file_through_client_fs(workspace: Path) -> None:
    path = os.fspath(workspace / "main.tf")
    (workspace / "main.tf").write_text("on disk\n")  # the editor's buffer differs from it
    fs = FakeFs({path: "buffer text\n"})
    ctx = ToolContext.for_session(workspace, fs_read=fs, fs_write=fs)
    outcome = await WriteFileTool().run({"path": "main.tf", "content": "new\n"}, ctx)
    assert fs.writes == [(path, "new\n")]
    assert (workspace / "main.tf").read_text() == "on disk\n"  # the client did the writing
    assert outcome.content[0]["oldText"] == "buffer text\n"
    assert outcome.raw_output["via"] == "client"


async def test_write_file_client_write_only_reads_old_text_locally(workspace: Path) -> None:
    (workspace / "main.tf").write_text("on disk\n")
    fs = FakeFs({})
    ctx = ToolContext.for_session(workspace, fs_write=fs)
    outcome = await WriteFileTool().run({"path": "main.tf", "content": "new\n"}, ctx)
    assert outcome.content[0]["oldText"] == "on disk\n"
    assert fs.reads == [] and len(fs.writes) == 1


# --- edit_file -------------------------------------------------------------------------------


async def test_edit_file_unique_match(workspace: Path, ctx: ToolContext) -> None:
    target = workspace / "main.tf"
    target.write_text('region = "us-east-1"\nzone = "a"\n')
    target.chmod(0o640)
    outcome = await EditFileTool().run(
        {"path": "main.tf", "old_string": '"us-east-1"', "new_string": '"eu-west-1"'}, ctx
    )
    assert not outcome.is_error
    assert target.read_text() == 'region = "eu-west-1"\nzone = "a"\n'
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    diff = outcome.content[0]
    assert diff["type"] == "diff" and diff["oldText"].startswith('region = "us-east-1"')
    assert diff["newText"] == target.read_text()
    assert outcome.raw_output["firstLine"] == 1
    assert _leftovers(workspace) == []


async def test_edit_file_ambiguous_missing_and_replace_all(
    workspace: Path, ctx: ToolContext
) -> None:
    target = workspace / "vars.tf"
    target.write_text("x = 1\ny = 1\n")
    tool = EditFileTool()
    ambiguous = await tool.run({"path": "vars.tf", "old_string": "= 1", "new_string": "= 2"}, ctx)
    assert ambiguous.is_error and "occurs 2 times" in ambiguous.model_content
    assert target.read_text() == "x = 1\ny = 1\n"
    missing = await tool.run({"path": "vars.tf", "old_string": "= 3", "new_string": "= 2"}, ctx)
    assert missing.is_error and "not found" in missing.model_content
    replaced = await tool.run(
        {"path": "vars.tf", "old_string": "= 1", "new_string": "= 2", "replace_all": True}, ctx
    )
    assert not replaced.is_error and replaced.raw_output["replacements"] == 2
    assert target.read_text() == "x = 2\ny = 2\n"


async def test_edit_file_errors(workspace: Path, ctx: ToolContext) -> None:
    tool = EditFileTool()
    no_file = await tool.run({"path": "nope.tf", "old_string": "a", "new_string": "b"}, ctx)
    assert no_file.is_error and "not found" in no_file.model_content
    (workspace / "a.tf").write_text("a\n")
    same = await tool.run({"path": "a.tf", "old_string": "a", "new_string": "a"}, ctx)
    assert same.is_error
    empty_old = await tool.run({"path": "a.tf", "old_string": "", "new_string": "b"}, ctx)
    assert empty_old.is_error and "must not be empty" in empty_old.model_content


async def test_edit_file_uses_client_buffer(workspace: Path) -> None:
    path = os.fspath(workspace / "main.tf")
    (workspace / "main.tf").write_text("disk version\n")
    fs = FakeFs({path: "editor version\n"})
    ctx = ToolContext.for_session(workspace, fs_read=fs, fs_write=fs)
    outcome = await EditFileTool().run(
        {"path": "main.tf", "old_string": "editor", "new_string": "edited"}, ctx
    )
    assert fs.writes == [(path, "edited version\n")]
    assert outcome.content[0]["oldText"] == "editor version\n"


@pytest.mark.parametrize(
    ("tool", "bad_input"),
    [
        (ReadFileTool(), {}),
        (ReadFileTool(), {"path": 3}),
        (ReadFileTool(), {"path": "a", "offset": "two"}),
        (ReadFileTool(), {"path": "a", "offset": 0}),
        (WriteFileTool(), {"path": "a"}),
        (EditFileTool(), {"path": "a", "old_string": "x"}),
        (EditFileTool(), {"path": "a", "old_string": "x", "new_string": "y", "replace_all": 1}),
        (GrepTool(), {"pattern": ["x"]}),
        (GlobTool(), "not an object"),
        (ListFilesTool(), None),
    ],
)
async def test_invalid_input_is_an_error_outcome(
    tool: Any, bad_input: Any, ctx: ToolContext
) -> None:
    outcome = await tool.run(bad_input, ctx)
    assert outcome.is_error
    assert outcome.model_content.startswith(f"Invalid input for {tool.name}")
    access = await tool.access(bad_input, ctx)
    assert access.input_error is not None
    assert tool.title(bad_input) == tool.name
    assert tool.locations(bad_input, ctx) == []


@pytest.mark.skipif(not __import__("shutil").which("rg"), reason="ripgrep not installed")
async def test_grep_ripgrep_caps_skips_sensitive_and_falls_back(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / "many.txt").write_text("hit\n" * 20)
    (workspace / ".env").write_text("hit=secret\n")
    capped = ToolContext.for_session(workspace).with_limits(grep_max_matches=5)
    outcome = await GrepTool(ripgrep=True).run({"pattern": "hit"}, capped)
    assert outcome.raw_output["engine"] == "ripgrep"
    assert outcome.raw_output["matchCount"] == 5 and outcome.raw_output["truncated"]
    assert "secret" not in outcome.model_content
    # Look-behind is Python-only syntax: ripgrep rejects it and the Python engine answers.
    lookbehind = await GrepTool(ripgrep=True).run({"pattern": "(?<=h)it"}, ctx)
    assert lookbehind.raw_output["engine"] == "python"
    assert lookbehind.model_content.splitlines()[0] == "many.txt:1:hit"
