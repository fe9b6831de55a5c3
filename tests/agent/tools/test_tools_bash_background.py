"""bash ``background: true``: real jobs that outlive their call, not their session."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from iac_code.tools.background_jobs import BackgroundJobs
from iac_code.tools.bash import BashTool
from iac_code.tools.contract import ToolContext

from tests.agent.tools.test_tools_bash import _alive, _read_pid

pytestmark = pytest.mark.anyio

SESSION = "sess_bg"
# A shell with a child: both write their pids, then wait for good.
SERVER = "echo started; sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait"
WAIT_S = 30.0


class _Changes:
    """Records which session's job list changed, and lets a test wait for the next change."""

    def __init__(self) -> None:
        self.sessions: list[str] = []
        self._event = anyio.Event()

    async def __call__(self, session_id: str) -> None:
        self.sessions.append(session_id)
        self._event.set()
        self._event = anyio.Event()

    async def next(self) -> None:
        with anyio.fail_after(WAIT_S):
            await self._event.wait()


def _with_jobs(ctx: ToolContext, jobs: BackgroundJobs, call_id: str = "call_1") -> ToolContext:
    return replace(ctx, start_background=partial(jobs.start, SESSION, call_id))


def _watched() -> tuple[BackgroundJobs, _Changes]:
    jobs = BackgroundJobs()
    changes = _Changes()
    jobs.add_listener(changes)
    return jobs, changes


async def test_background_call_returns_with_a_job_that_runs_on_until_its_session_closes(
    workspace: Path, ctx: ToolContext
) -> None:
    jobs, changes = _watched()
    with anyio.fail_after(WAIT_S):
        outcome = await BashTool().run(
            {"command": SERVER, "background": True}, _with_jobs(ctx, jobs)
        )
    shell_pid = await _read_pid(workspace / "shell.pid")
    child_pid = await _read_pid(workspace / "child.pid")
    assert not outcome.is_error
    job_id = outcome.raw_output["jobId"]
    assert outcome.raw_output["running"] is True
    assert f"running in the background as {job_id}" in outcome.model_content
    assert changes.sessions == [SESSION]  # told when it started
    [job] = jobs.running(SESSION)
    assert job.job_id == job_id and job.to_wire()["toolCallId"] == "call_1"
    assert _alive(shell_pid) and _alive(child_pid)  # the call ended, the job did not
    with anyio.fail_after(WAIT_S):
        await jobs.stop_session(SESSION)
    assert not _alive(shell_pid) and not _alive(child_pid)  # no orphan: the whole tree
    assert jobs.running(SESSION) == []
    assert changes.sessions == [SESSION]  # a closed session is not told about its jobs


async def test_a_job_that_ends_is_reported_and_leaves_nothing_behind(
    workspace: Path, ctx: ToolContext
) -> None:
    jobs, changes = _watched()
    # The shell exits when told (a file appears); its own background sleep is a leftover.
    command = (
        "sleep 300 & echo $! > left.pid; "
        "while [ ! -e stop ]; do sleep 0.05; done; echo finished; exit 4"
    )
    outcome = await BashTool().run({"command": command, "background": True}, _with_jobs(ctx, jobs))
    left_pid = await _read_pid(workspace / "left.pid")
    assert outcome.raw_output["running"] is True
    [job] = jobs.running(SESSION)
    ended = changes.next()
    (workspace / "stop").write_text("")
    await ended
    assert changes.sessions == [SESSION, SESSION]  # started, then ended
    assert jobs.running(SESSION) == []
    assert job.exit_code == 4 and "finished" in job.output()
    assert not _alive(left_pid)  # what the job left running ended with it


async def test_a_command_that_fails_at_once_says_so_in_its_call(ctx: ToolContext) -> None:
    jobs = BackgroundJobs()
    with anyio.fail_after(WAIT_S):
        outcome = await BashTool().run(
            {"command": "echo no such thing >&2; exit 7", "background": True},
            _with_jobs(ctx, jobs),
        )
    # Usually ended within the call's first second; on a loaded machine it may end later,
    # and then it is the job that says so.
    if outcome.raw_output["running"]:
        [job] = jobs.running(SESSION) or [None]
        if job is not None:
            await anyio.to_thread.run_sync(job.ended.wait, WAIT_S)
            assert job.exit_code == 7 and "no such thing" in job.output()
        return
    assert outcome.is_error and outcome.raw_output["exitCode"] == 7
    assert "already ended: exit code 7" in outcome.model_content
    assert "no such thing" in outcome.model_content


async def test_background_without_a_job_runner_is_a_clear_tool_error(ctx: ToolContext) -> None:
    outcome = await BashTool().run({"command": "true", "background": True}, ctx)
    assert outcome.is_error
    assert "not available" in outcome.model_content


async def test_stop_all_ends_every_session_s_jobs(workspace: Path, ctx: ToolContext) -> None:
    jobs = BackgroundJobs()
    first = workspace / "a"
    second = workspace / "b"
    first.mkdir()
    second.mkdir()
    for folder in (first, second):
        await BashTool().run(
            {"command": "echo $$ > shell.pid; sleep 300", "background": True},
            _with_jobs(ToolContext.for_session(folder, limits=ctx.limits), jobs),
        )
    pids = [await _read_pid(folder / "shell.pid") for folder in (first, second)]
    with anyio.fail_after(WAIT_S):
        await jobs.stop_all()
    assert not any(_alive(pid) for pid in pids)


def test_kill_all_now_needs_no_event_loop(workspace: Path, ctx: ToolContext) -> None:
    """What runs at interpreter exit: SIGKILL every tree without waiting in a loop."""
    jobs = BackgroundJobs()

    async def start() -> int:
        await BashTool().run(
            {"command": "echo $$ > shell.pid; sleep 300", "background": True},
            _with_jobs(ctx, jobs),
        )
        return await _read_pid(workspace / "shell.pid")

    pid = anyio.run(start)
    jobs.kill_all_now()
    assert jobs.running(SESSION) == []
    # The watcher thread reaps the killed shell; wait for it (bounded) through /proc.
    anyio.run(_gone, pid)


async def _gone(pid: int) -> None:
    with anyio.fail_after(WAIT_S):
        while _alive(pid):  # noqa: ASYNC110 - another process: nothing to wait on but /proc
            await anyio.sleep(0.02)
