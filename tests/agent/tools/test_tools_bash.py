"""bash: local process groups (real subprocesses) and delegation to client terminals."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from iac_code.tools import process_group
from iac_code.tools.bash import BashTool
from iac_code.tools.contract import ToolContext
from iac_code.tools.process_group import OutputBuffer

pytestmark = pytest.mark.anyio

# A command whose child starts a grandchild; both write their pids and then wait.
TREE = "sh -c 'sleep 300 & echo $! > grandchild.pid; wait' & echo $! > child.pid; wait"


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def _read_pid(path: Path) -> int:
    """Wait (bounded) for a pid file written by the command under test."""
    pid_file = anyio.Path(path)
    with anyio.fail_after(60):
        # Another process writes the file, so there is no event to wait on: poll it.
        while not (await pid_file.exists()) or not (await pid_file.read_text()).strip():  # noqa: ASYNC110
            await anyio.sleep(0.01)
    return int(await pid_file.read_text())


async def test_output_and_exit_code(workspace: Path, ctx: ToolContext) -> None:
    outcome = await BashTool().run({"command": "echo out; echo err >&2; exit 3"}, ctx)
    assert outcome.is_error
    lines = outcome.model_content.splitlines()
    assert "out" in lines and "err" in lines
    assert lines[-1] == "[exit code: 3]"
    assert outcome.raw_output["exitCode"] == 3
    assert outcome.content[0]["type"] == "content"


async def test_success_runs_in_cwd_with_empty_stdin(workspace: Path, ctx: ToolContext) -> None:
    outcome = await BashTool().run({"command": "pwd; cat; echo done"}, ctx)
    assert not outcome.is_error
    assert outcome.model_content.splitlines() == [str(workspace), "done", "[exit code: 0]"]


async def test_env_is_used(workspace: Path) -> None:
    ctx = ToolContext.for_session(workspace, env={"PATH": os.environ["PATH"], "STAGE": "dev"})
    outcome = await BashTool().run({"command": 'echo "stage=$STAGE pager=$PAGER"'}, ctx)
    assert outcome.model_content.splitlines()[0] == "stage=dev pager=cat"


async def test_output_capture_is_capped(workspace: Path) -> None:
    ctx = ToolContext.for_session(workspace).with_limits(bash_output_bytes=1000)
    outcome = await BashTool().run(
        {"command": "echo FIRST; head -c 100000 /dev/zero | tr '\\0' x; echo; echo LAST"}, ctx
    )
    assert outcome.raw_output["truncated"] is True
    assert outcome.raw_output["outputBytes"] > 100000
    assert "[output truncated:" in outcome.model_content
    assert outcome.model_content.startswith("FIRST")
    assert "LAST" in outcome.model_content


async def test_model_content_keeps_head_tail_and_status(workspace: Path) -> None:
    ctx = ToolContext.for_session(workspace).with_limits(result_cap_chars=300)
    outcome = await BashTool().run({"command": "seq 1 5000"}, ctx)
    assert outcome.model_content.startswith("1\n")
    assert outcome.model_content.endswith("5000\n[exit code: 0]")
    assert "characters omitted" in outcome.model_content


async def test_timeout_kills_the_process_tree(workspace: Path) -> None:
    ctx = ToolContext.for_session(workspace).with_limits(bash_timeout_s=1.0, kill_grace_s=2.0)
    with anyio.fail_after(60):
        outcome = await BashTool().run({"command": TREE}, ctx)
    assert outcome.is_error and outcome.raw_output["timedOut"] is True
    assert "timed out after 1 s" in outcome.model_content
    child = await _read_pid(workspace / "child.pid")
    grandchild = await _read_pid(workspace / "grandchild.pid")
    assert not _alive(child)
    assert not _alive(grandchild)


async def test_cancellation_kills_the_process_tree(workspace: Path, ctx: ToolContext) -> None:
    finished: list[Any] = []

    async def call() -> None:
        finished.append(await BashTool().run({"command": TREE}, ctx))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            grandchild = await _read_pid(workspace / "grandchild.pid")
            child = await _read_pid(workspace / "child.pid")
            group.cancel_scope.cancel()
    assert finished == []  # cancelled, not completed
    assert not _alive(child)
    assert not _alive(grandchild)


async def test_background_jobs_do_not_outlive_the_call(workspace: Path, ctx: ToolContext) -> None:
    with anyio.fail_after(60):
        outcome = await BashTool().run({"command": "sleep 300 & echo $! > bg.pid; echo ok"}, ctx)
    assert outcome.model_content.splitlines()[0] == "ok"
    assert not _alive(await _read_pid(workspace / "bg.pid"))


async def _wait_gone(pid: int) -> bool:
    """Wait (bounded) for ``pid`` to stop running; False if it still runs after 5 s."""
    with anyio.move_on_after(5):
        # Nothing to wait on for a process that is not our child: poll /proc.
        while _alive(pid):  # noqa: ASYNC110
            await anyio.sleep(0.02)
        return True
    return False


def _kill_leftover(pid: int) -> None:
    """Clean up after a failing run, so a regression does not leave sleeps behind."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


async def test_a_job_control_background_job_does_not_outlive_the_call(
    workspace: Path, ctx: ToolContext
) -> None:
    # ``set -m`` puts the job into a process group of its own: killing the call's group
    # misses it, but it stays in the call's session.
    with anyio.fail_after(60):
        outcome = await BashTool().run({"command": "set -m; sleep 300 & echo $!"}, ctx)
    pid = int(outcome.model_content.splitlines()[0])
    try:
        assert await _wait_gone(pid), f"the background job {pid} outlived the call"
    finally:
        _kill_leftover(pid)


async def test_cancellation_kills_a_job_control_background_job(
    workspace: Path, ctx: ToolContext
) -> None:
    finished: list[Any] = []

    async def call() -> None:
        command = "set -m; sleep 300 & echo $! > bg.pid; wait"
        finished.append(await BashTool().run({"command": command}, ctx))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            pid = await _read_pid(workspace / "bg.pid")
            group.cancel_scope.cancel()
    try:
        assert finished == []  # cancelled, not completed
        assert await _wait_gone(pid), f"the background job {pid} outlived the cancelled call"
    finally:
        _kill_leftover(pid)


async def test_a_cancel_that_lands_during_the_spawn_still_stops_the_tree(
    workspace: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shell runs from the fork on, but the call gets its process object only once the
    spawn's await returns (asyncio connects the pipes meanwhile). A cancel landing there
    (the agent shutting down on a busy machine) used to leave the call without a process to
    stop: asyncio killed the shell alone and its ``set -m`` job kept running."""
    real_open_process = anyio.open_process
    group_scope: list[anyio.CancelScope] = []

    async def cancelled_while_spawning(*args: Any, **kwargs: Any) -> Any:
        process = await real_open_process(*args, **kwargs)
        await _read_pid(workspace / "bg.pid")  # the command is running by now
        group_scope[0].cancel()  # the cancel arrives before the spawn has returned
        await anyio.lowlevel.checkpoint()
        return process

    monkeypatch.setattr(process_group.anyio, "open_process", cancelled_while_spawning)
    command = "set -m; sleep 300 & echo $! > bg.pid; wait"
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group_scope.append(group.cancel_scope)
            group.start_soon(BashTool().run, {"command": command}, ctx)
    pid = int((workspace / "bg.pid").read_text())
    try:
        assert await _wait_gone(pid), f"the background job {pid} outlived the cancelled call"
    finally:
        _kill_leftover(pid)


async def test_a_detached_child_is_stopped_while_its_parent_runs(
    workspace: Path, ctx: ToolContext
) -> None:
    # ``setsid`` leaves the session; the process is still a descendant of the call.
    command = "setsid sleep 300 & echo $! > detached.pid; wait"
    ctx = ctx.with_limits(bash_timeout_s=1.0, kill_grace_s=2.0)
    with anyio.fail_after(60):
        outcome = await BashTool().run({"command": command}, ctx)
    assert outcome.raw_output["timedOut"] is True
    pid = await _read_pid(workspace / "detached.pid")
    try:
        assert await _wait_gone(pid), f"the detached child {pid} outlived the call"
    finally:
        _kill_leftover(pid)


async def test_title_and_access(workspace: Path, ctx: ToolContext) -> None:
    tool = BashTool()
    assert tool.title({"command": "terraform validate"}) == "Run terraform validate"
    assert (
        tool.title({"command": "x", "description": "Check syntax"}) == "Run x \u2014 Check syntax"
    )
    access = await tool.access({"command": "ls"}, ctx)
    assert access.kind == "execute" and not access.restricted
    invalid = await tool.run({"command": "ls", "timeout": 0}, ctx)
    assert invalid.is_error and "at least 1" in invalid.model_content


def test_output_buffer_keeps_head_and_tail() -> None:
    buffer = OutputBuffer(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrst"):
        buffer.add(chunk)
    assert buffer.total == 20 and buffer.truncated
    assert buffer.text() == "abcde\n[output truncated: 10 bytes omitted]\npqrst"


# --- client terminals ------------------------------------------------------------------------


class FakeTerminals:
    """A client with terminal/* methods; ``hang`` makes wait_for_exit never return."""

    def __init__(self, *, hang: bool = False, exit_code: int = 0) -> None:
        self.hang = hang
        self.exit_code = exit_code
        self.calls: list[tuple[Any, ...]] = []
        self.waiting = anyio.Event()

    async def create(
        self, command: str, args: list[str], cwd: str, env: list[dict[str, str]], limit: int
    ) -> str:
        self.calls.append(("create", command, args, cwd, env, limit))
        return "term-1"

    async def wait_for_exit(self, terminal_id: str) -> tuple[int | None, str | None]:
        self.calls.append(("wait_for_exit", terminal_id))
        self.waiting.set()
        if self.hang:
            await anyio.sleep_forever()
        return self.exit_code, None

    async def output(self, terminal_id: str) -> tuple[str, bool, dict[str, Any] | None]:
        self.calls.append(("output", terminal_id))
        status: dict[str, Any] = {"exitCode": self.exit_code, "signal": None}
        if self.hang:  # killed after the timeout
            status = {"exitCode": None, "signal": "SIGKILL"}
        return "hello from the terminal\n", False, status

    async def kill(self, terminal_id: str) -> None:
        self.calls.append(("kill", terminal_id))

    async def release(self, terminal_id: str) -> None:
        self.calls.append(("release", terminal_id))

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]


def _terminal_ctx(workspace: Path, terminals: FakeTerminals, **limits: Any) -> ToolContext:
    reported: list[Any] = []

    async def report(content: list[dict[str, Any]]) -> None:
        terminals.calls.append(("report", content))
        reported.append(content)

    ctx = ToolContext.for_session(workspace, terminal=terminals, report_content=report)
    return ctx.with_limits(**limits) if limits else ctx


async def test_terminal_delegation(workspace: Path) -> None:
    terminals = FakeTerminals()
    ctx = _terminal_ctx(workspace, terminals)
    outcome = await BashTool().run({"command": "terraform fmt -check"}, ctx)
    create = terminals.calls[0]
    assert create[0] == "create"
    assert create[2] == ["-c", "terraform fmt -check"] and create[3] == str(workspace)
    assert terminals.names() == ["create", "report", "wait_for_exit", "output", "release"]
    assert terminals.calls[1][1] == [{"type": "terminal", "terminalId": "term-1"}]
    assert outcome.content == [{"type": "terminal", "terminalId": "term-1"}]
    assert not outcome.is_error
    assert outcome.model_content == "hello from the terminal\n[exit code: 0]"


async def test_terminal_nonzero_exit_is_error(workspace: Path) -> None:
    terminals = FakeTerminals(exit_code=2)
    outcome = await BashTool().run({"command": "false"}, _terminal_ctx(workspace, terminals))
    assert outcome.is_error and outcome.raw_output["exitCode"] == 2
    assert terminals.names()[-1] == "release"


async def test_terminal_timeout_kills_then_releases(workspace: Path) -> None:
    terminals = FakeTerminals(hang=True)
    ctx = _terminal_ctx(workspace, terminals, bash_timeout_s=0.1)
    with anyio.fail_after(60):
        outcome = await BashTool().run({"command": "sleep 999"}, ctx)
    assert terminals.names() == ["create", "report", "wait_for_exit", "kill", "output", "release"]
    assert outcome.is_error and outcome.raw_output["timedOut"] is True
    assert outcome.raw_output["signal"] == "SIGKILL"


async def test_terminal_cancel_still_releases(workspace: Path) -> None:
    terminals = FakeTerminals(hang=True)
    ctx = _terminal_ctx(workspace, terminals)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(BashTool().run, {"command": "sleep 999"}, ctx)
            await terminals.waiting.wait()
            group.cancel_scope.cancel()
    assert terminals.names() == ["create", "report", "wait_for_exit", "release"]
