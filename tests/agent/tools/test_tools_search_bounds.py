"""grep and glob are bounded in time, cancellable, and never hold up the event loop (issue 8.1).

ripgrep is hidden in every test here, so the pure-Python engine runs; it runs in a worker
process that is killed at the deadline or on cancel.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from iac_code.tools import search_process
from iac_code.tools.contract import ToolContext
from iac_code.tools.glob_files import GlobTool
from iac_code.tools.grep_search import GrepTool
from iac_code.tools.read_file import ReadFileTool

pytestmark = pytest.mark.anyio

CATASTROPHIC_REGEX = "(.*)*y"
# Translates to nested "[^/]*(?:a|b)" groups: polynomial blow-up on a long name without "z".
CATASTROPHIC_GLOB = "*{a,b}" * 12 + "*z"
WAIT_S = 60.0


@pytest.fixture(autouse=True)
def no_ripgrep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)


class Spawned(list[anyio.abc.Process]):
    """Every worker process started, so tests can check it was killed."""

    def __init__(self) -> None:
        super().__init__()
        self.started = anyio.Event()


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Spawned:
    processes = Spawned()
    real_spawn = search_process._spawn

    async def recording_spawn() -> anyio.abc.Process:
        process = await real_spawn()
        processes.append(process)
        processes.started.set()
        return process

    monkeypatch.setattr(search_process, "_spawn", recording_spawn)
    return processes


@pytest.fixture
def backtracking_file(workspace: Path) -> Path:
    path = workspace / "notes.txt"
    path.write_text("x" * 40 + "\n")
    return path


async def test_a_catastrophic_regex_fails_with_a_clear_message_at_the_deadline(
    ctx: ToolContext, backtracking_file: Path, spawned: Spawned
) -> None:
    with anyio.fail_after(WAIT_S):
        outcome = await GrepTool().run(
            {"pattern": CATASTROPHIC_REGEX}, ctx.with_limits(search_timeout_s=1.0)
        )
    assert outcome.is_error
    assert "timed out after 1 s" in outcome.model_content
    assert "Simplify the pattern" in outcome.model_content
    assert outcome.raw_output["timedOut"] is True
    assert spawned and all(process.returncode is not None for process in spawned)


async def test_a_catastrophic_glob_fails_with_a_clear_message_at_the_deadline(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / ("a" * 80)).write_text("")
    with anyio.fail_after(WAIT_S):
        outcome = await GlobTool().run(
            {"pattern": CATASTROPHIC_GLOB}, ctx.with_limits(search_timeout_s=1.0)
        )
    assert outcome.is_error
    assert outcome.model_content.startswith("glob stopped: matching timed out after 1 s")


async def test_the_event_loop_keeps_serving_and_cancel_kills_the_worker(
    ctx: ToolContext, backtracking_file: Path, spawned: Spawned
) -> None:
    slow_ctx = ctx.with_limits(search_timeout_s=600.0)
    finished: list[Any] = []

    async def search() -> None:
        finished.append(await GrepTool().run({"pattern": CATASTROPHIC_REGEX}, slow_ctx))

    with anyio.fail_after(WAIT_S):
        async with anyio.create_task_group() as group:
            group.start_soon(search)
            await spawned.started.wait()
            # Another tool call completes while the search is running.
            read = await ReadFileTool().run({"path": "notes.txt"}, ctx)
            assert not read.is_error
            assert finished == []
            group.cancel_scope.cancel()
    assert finished == []
    assert len(spawned) == 1
    assert spawned[0].returncode is not None  # killed and reaped, not left running


async def test_grep_stops_at_the_entry_budget_of_a_huge_tree(
    ctx: ToolContext, workspace: Path
) -> None:
    for index in range(30):
        (workspace / f"f{index:02}.tf").write_text("needle\n")
    outcome = await GrepTool().run({"pattern": "needle"}, ctx.with_limits(walk_max_entries=10))
    assert not outcome.is_error
    assert outcome.model_content.count("needle") == 10
    assert "search stopped early" in outcome.model_content


async def test_grep_stops_at_the_byte_budget(ctx: ToolContext, workspace: Path) -> None:
    for index in range(5):
        (workspace / f"f{index}.tf").write_text("needle\n" + "filler\n" * 100)
    outcome = await GrepTool().run(
        {"pattern": "needle"}, ctx.with_limits(grep_max_total_bytes=1_500)
    )
    assert not outcome.is_error
    assert outcome.model_content.count("needle") == 2  # 707 bytes each
    assert "search stopped early" in outcome.model_content


async def test_an_invalid_regex_is_reported_by_the_worker(
    ctx: ToolContext, backtracking_file: Path
) -> None:
    outcome = await GrepTool().run({"pattern": "(unclosed"}, ctx)
    assert outcome.is_error
    assert outcome.model_content.startswith("Invalid regular expression:")


async def test_grep_results_are_unchanged_through_the_worker(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "b.tf").write_text("one\nregion = 1\n")
    (workspace / "a.tf").write_text("region = 2\n")
    (workspace / ".env").write_text("region = secret\n")
    outcome = await GrepTool().run({"pattern": "REGION", "case_insensitive": True}, ctx)
    assert outcome.model_content.splitlines()[:2] == ["a.tf:1:region = 2", "b.tf:2:region = 1"]
    assert "1 sensitive files" in outcome.model_content
    assert outcome.raw_output["engine"] == "python"


def test_the_timeout_can_be_set_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from iac_code.tools.contract import SEARCH_TIMEOUT_ENV, ToolLimits

    monkeypatch.setenv(SEARCH_TIMEOUT_ENV, "2.5")
    assert ToolLimits().search_timeout_s == 2.5
    monkeypatch.setenv(SEARCH_TIMEOUT_ENV, "-1")
    assert ToolLimits().search_timeout_s == 20.0


async def test_a_repository_file_cannot_shadow_a_module_of_the_worker(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent usually runs inside the user's repository; its files must not be imported."""
    marker = workspace / "imported.marker"
    for module in ("json", "re"):
        (workspace / f"{module}.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (workspace / "main.tf").write_text("needle\n")
    monkeypatch.chdir(workspace)
    outcome = await GrepTool().run({"pattern": "needle", "glob": "*.tf"}, ctx)
    assert outcome.model_content == "main.tf:1:needle"
    assert not marker.exists()


def test_the_worker_gets_no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("IAC_CODE_HOME", "/state")
    env = search_process._worker_env()
    assert "sk-ant-secret" not in env.values() and "secret" not in env.values()
    assert env["IAC_CODE_HOME"] == "/state"
    assert env["PYTHONPATH"].split(os.pathsep)[0].endswith("runtime")
