"""Issue 8 items 2, 6, 7: file tools touch exactly what was checked, refuse non-regular
files, and name a symlink's target.

A "race" here is deterministic: the Access is computed (as the permission decision does),
then a directory on the way is swapped for a symlink, then the tool runs with that Access.
"""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from iac_code.tools import workspace as workspace_module
from iac_code.tools import write_file as write_file_module
from iac_code.tools.contract import ToolContext
from iac_code.tools.edit_file import EditFileTool
from iac_code.tools.grep_search import GrepTool
from iac_code.tools.list_files import ListFilesTool
from iac_code.tools.read_file import ReadFileTool
from iac_code.tools.write_file import WriteFileTool

pytestmark = pytest.mark.anyio

FAST_S = 30.0  # a refused call comes back at once; this only bounds a regression


@pytest.fixture
def sub(workspace: Path) -> Path:
    directory = workspace / "sub"
    directory.mkdir()
    (directory / "main.tf").write_text("region = 1\n")
    return directory


def names_in(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def swap_for_symlink(directory: Path, target: Path) -> None:
    """Replace ``directory`` by a symlink to ``target`` (the attacker's move)."""
    directory.rename(directory.with_name(directory.name + ".moved"))
    directory.symlink_to(target, target_is_directory=True)


# --- item 2: writes -------------------------------------------------------------------------


async def test_write_refuses_when_a_directory_became_a_symlink_after_the_check(
    ctx: ToolContext, sub: Path, outside: Path
) -> None:
    tool = WriteFileTool()
    tool_input = {"path": "sub/new.tf", "content": "evil\n"}
    access = await tool.access(tool_input, ctx)
    assert not access.restricted
    swap_for_symlink(sub, outside)
    outcome = await tool.run(tool_input, ctx, access=access)
    assert outcome.is_error
    assert "Refused" in outcome.model_content and "symlink" in outcome.model_content
    assert names_in(outside) == []


async def test_edit_refuses_when_a_directory_became_a_symlink_after_the_check(
    ctx: ToolContext, sub: Path, outside: Path
) -> None:
    (outside / "main.tf").write_text("region = 1\n")
    tool = EditFileTool()
    tool_input = {"path": "sub/main.tf", "old_string": "1", "new_string": "2"}
    access = await tool.access(tool_input, ctx)
    swap_for_symlink(sub, outside)
    outcome = await tool.run(tool_input, ctx, access=access)
    assert outcome.is_error and "Refused" in outcome.model_content
    assert (outside / "main.tf").read_text() == "region = 1\n"


async def test_the_dir_fd_walk_refuses_even_when_the_swap_beats_the_re_check(
    ctx: ToolContext, sub: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap lands between the re-check and the write: O_NOFOLLOW still stops it."""
    tool = WriteFileTool()
    tool_input = {"path": "sub/new.tf", "content": "evil\n"}
    access = await tool.access(tool_input, ctx)
    real_verify = workspace_module.verify_unchanged

    def verify_then_swap(path: Path, checked: Path) -> None:
        real_verify(path, checked)
        if not sub.is_symlink():
            swap_for_symlink(sub, outside)

    monkeypatch.setattr(write_file_module, "verify_unchanged", verify_then_swap)
    outcome = await tool.run(tool_input, ctx, access=access)
    assert outcome.is_error
    assert "changed after it was checked" in outcome.model_content
    assert names_in(outside) == []


async def test_a_symlink_that_was_there_at_the_check_is_still_written_through(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    """What was checked (and asked about) is written: the link's real target."""
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    tool = WriteFileTool()
    tool_input = {"path": "link/approved.tf", "content": "ok\n"}
    access = await tool.access(tool_input, ctx)
    assert access.outside_workspace
    outcome = await tool.run(tool_input, ctx, access=access)
    assert not outcome.is_error, outcome.model_content
    assert (outside / "approved.tf").read_text() == "ok\n"


async def test_writes_keep_mode_and_create_parent_directories(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "run.sh").write_text("echo 1\n")
    (workspace / "run.sh").chmod(0o750)
    tool = WriteFileTool()
    for tool_input in (
        {"path": "run.sh", "content": "echo 2\n"},
        {"path": "a/b/c.tf", "content": "x"},
    ):
        access = await tool.access(tool_input, ctx)
        outcome = await tool.run(tool_input, ctx, access=access)
        assert not outcome.is_error, outcome.model_content
    assert (workspace / "run.sh").stat().st_mode & 0o777 == 0o750
    assert (workspace / "a" / "b" / "c.tf").read_text() == "x"
    assert names_in(workspace) == ["a", "run.sh"]  # no temp files left


# --- item 2: reads of sensitive paths -------------------------------------------------------


async def test_a_read_cannot_be_redirected_to_a_credential_after_the_check(
    ctx: ToolContext, sub: Path, fake_home: Path
) -> None:
    ssh = fake_home / ".ssh"
    ssh.mkdir()
    (ssh / "main.tf").write_text("PRIVATE KEY\n")
    tool = ReadFileTool()
    access = await tool.access({"path": "sub/main.tf"}, ctx)
    assert not access.restricted  # auto-allowed: an ordinary workspace file
    swap_for_symlink(sub, ssh)
    outcome = await tool.run({"path": "sub/main.tf"}, ctx, access=access)
    assert outcome.is_error and "Refused" in outcome.model_content
    assert "PRIVATE KEY" not in outcome.model_content


def read_following_links(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


class SwappingReader:
    """A client ``fs/read_text_file`` that makes the attacker's move before answering."""

    def __init__(self, directory: Path, target: Path) -> None:
        self.directory, self.target = directory, target

    async def read_text_file(self, path: str, line: int | None, limit: int | None) -> str:
        swap_for_symlink(self.directory, self.target)
        return read_following_links(path)  # the client follows the new symlink


async def test_a_read_through_the_client_discards_text_from_a_swapped_path(
    workspace: Path, sub: Path, fake_home: Path
) -> None:
    ssh = fake_home / ".ssh"
    ssh.mkdir()
    (ssh / "main.tf").write_text("PRIVATE KEY\n")
    ctx = ToolContext.for_session(workspace, fs_read=SwappingReader(sub, ssh))
    tool = ReadFileTool()
    access = await tool.access({"path": "sub/main.tf"}, ctx)
    outcome = await tool.run({"path": "sub/main.tf"}, ctx, access=access)
    assert outcome.is_error and outcome.model_content.startswith("Refused:")
    assert "PRIVATE KEY" not in outcome.model_content


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        (ListFilesTool(), {"path": "sub"}),
        (GrepTool(ripgrep=False), {"pattern": "KEY", "path": "sub"}),
    ],
    ids=["list_files", "grep"],
)
async def test_listing_and_search_refuse_a_base_swapped_after_the_check(
    ctx: ToolContext, sub: Path, fake_home: Path, tool: Any, tool_input: dict[str, Any]
) -> None:
    ssh = fake_home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("PRIVATE KEY\n")
    access = await tool.access(tool_input, ctx)
    swap_for_symlink(sub, ssh)
    outcome = await tool.run(tool_input, ctx, access=access)
    assert outcome.is_error and outcome.model_content.startswith("Refused:")
    assert "id_ed25519" not in outcome.model_content


# --- item 6: non-regular files ------------------------------------------------------------------


@pytest.fixture
def fifo(workspace: Path) -> Iterator[Path]:
    path = workspace / "pipe"
    os.mkfifo(path)
    yield path


async def test_read_file_of_a_fifo_fails_fast_with_a_clear_message(
    ctx: ToolContext, fifo: Path
) -> None:
    tool = ReadFileTool()
    with anyio.fail_after(FAST_S):
        outcome = await tool.run(
            {"path": "pipe"}, ctx, access=await tool.access({"path": "pipe"}, ctx)
        )
    assert outcome.is_error
    assert outcome.model_content == (
        f"{fifo} is a named pipe (FIFO), not a regular file; only regular files can be read."
    )


async def test_write_and_edit_of_a_fifo_fail_fast(ctx: ToolContext, fifo: Path) -> None:
    with anyio.fail_after(FAST_S):
        written = await WriteFileTool().run({"path": "pipe", "content": "x"}, ctx)
        edited = await EditFileTool().run(
            {"path": "pipe", "old_string": "a", "new_string": "b"}, ctx
        )
    assert written.is_error and "named pipe" in written.model_content
    assert edited.is_error and "named pipe" in edited.model_content
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


async def test_grep_and_list_pass_over_a_fifo(
    ctx: ToolContext, fifo: Path, workspace: Path
) -> None:
    (workspace / "a.tf").write_text("needle\n")
    with anyio.fail_after(FAST_S * 4):
        found = await GrepTool(ripgrep=False).run({"pattern": "needle"}, ctx)
        listed = await ListFilesTool().run({}, ctx)
    assert found.model_content == "a.tf:1:needle"
    assert "pipe" in listed.model_content


async def test_read_file_of_a_socket_and_a_device_are_refused(
    ctx: ToolContext, workspace: Path
) -> None:
    path = workspace / "agent.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(os.fspath(path))
        with anyio.fail_after(FAST_S):
            sock = await ReadFileTool().run({"path": "agent.sock"}, ctx)
            device = await ReadFileTool().run({"path": "/dev/zero"}, ctx)
    assert sock.is_error and "is a socket, not a regular file" in sock.model_content
    assert device.is_error and "is a device, not a regular file" in device.model_content


# --- item 7: the symlink target is named ------------------------------------------------------


async def test_locations_and_reasons_name_the_symlink_target(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    tool = WriteFileTool()
    tool_input = {"path": "link/x.tf", "content": "x"}
    assert tool.locations(tool_input, ctx) == [
        {"path": str(workspace / "link" / "x.tf")},
        {"path": str(resolved(outside) / "x.tf")},
    ]
    access = await tool.access(tool_input, ctx)
    assert access.reasons == (
        f"{workspace / 'link' / 'x.tf'} (a symlink to {resolved(outside) / 'x.tf'}) "
        "is outside the workspace",
    )


async def test_a_link_to_a_sensitive_file_names_the_target(
    ctx: ToolContext, workspace: Path, fake_home: Path
) -> None:
    (fake_home / ".aws").mkdir()
    (fake_home / ".aws" / "credentials").write_text("k")
    (workspace / "creds.txt").symlink_to(fake_home / ".aws" / "credentials")
    tool = ReadFileTool()
    locations = tool.locations({"path": "creds.txt", "offset": 3}, ctx)
    assert locations == [
        {"path": str(workspace / "creds.txt"), "line": 3},
        {"path": str(resolved(fake_home) / ".aws" / "credentials")},
    ]
    access = await tool.access({"path": "creds.txt"}, ctx)
    assert access.sensitive and any("a symlink to" in reason for reason in access.reasons)


async def test_plain_paths_have_one_location(ctx: ToolContext, workspace: Path) -> None:
    assert WriteFileTool().locations({"path": "a.tf", "content": ""}, ctx) == [
        {"path": str(workspace / "a.tf")}
    ]
