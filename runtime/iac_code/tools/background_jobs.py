"""Commands the ``bash`` tool leaves running after its call ends (``background: true``).

A foreground ``bash`` call stops every process it started when it ends. A background job is
the one exception: its shell starts in a session of its own (as a foreground command does),
the call returns at once with the job's id, and the job keeps running until its shell
exits, its session is closed or deleted, or the agent exits — then its whole process tree
is stopped (:class:`~iac_code.tools.process_group.ProcessTree`), so nothing outlives the
session that asked for it.

Each job is watched by two daemon threads, not by event-loop tasks: a job outlives the tool
call (and its task group) that started it, and a blocking ``wait`` / ``read`` in a thread
needs no task group to live in. When a job's shell exits, the watcher stops what it left
behind and hands the change back to the event loop, where listeners (the v2 state updates)
learn which session's list of jobs changed.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import os
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

from iac_code.tools.process_group import OutputBuffer, ProcessTree

log = logging.getLogger(__name__)

#: A listener learns the id of the session whose list of running jobs changed.
JobListener = Callable[[str], Awaitable[None]]

#: How long a job's leftovers (processes its shell started and did not wait for) get to
#: exit on SIGTERM before SIGKILL, once the shell itself has exited.
_LEFTOVER_GRACE_S = 2.0
#: SIGTERM to SIGKILL delay when a job is stopped (its session closed).
_STOP_GRACE_S = 2.0
_READ_CHUNK = 65536
_job_numbers = itertools.count(1)


@dataclass(eq=False)
class BackgroundJob:
    """One command running in the background, and what it printed so far."""

    job_id: str
    session_id: str
    tool_call_id: str
    command: str
    process: subprocess.Popen[bytes]
    tree: ProcessTree
    buffer: OutputBuffer
    #: Set (from the watcher thread) once the shell exited and its leftovers are gone.
    ended: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def exit_code(self) -> int | None:
        return self.process.returncode

    def output(self) -> str:
        with self._lock:
            return self.buffer.text()

    def add_output(self, chunk: bytes) -> None:
        with self._lock:
            self.buffer.add(chunk)

    def to_wire(self) -> dict[str, object]:
        """The job as v2 ``BackgroundWork``: the tool call that started it keeps running."""
        return {
            "type": "tool_call",
            "toolCallId": self.tool_call_id,
            "_meta": {"iac_code": {"jobId": self.job_id, "command": self.command}},
        }


def _kill_tree_now(tree: ProcessTree) -> None:
    """SIGKILL a tree without waiting (the agent is exiting; there is no loop left)."""
    with contextlib.suppress(OSError):
        tree.signal(signal.SIGKILL)


class BackgroundJobs:
    """The background jobs of one agent, by session; stops them when asked or at exit."""

    def __init__(self) -> None:
        self._jobs: dict[str, BackgroundJob] = {}
        self._listeners: list[JobListener] = []
        # A process that exits without ``shutdown`` (an unhandled error) still stops its jobs.
        atexit.register(_stop_at_exit, weakref.ref(self))

    def add_listener(self, listener: JobListener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: JobListener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def running(self, session_id: str) -> list[BackgroundJob]:
        """The session's jobs that have not ended, oldest first."""
        return [job for job in self._jobs.values() if job.session_id == session_id]

    async def start(
        self,
        session_id: str,
        tool_call_id: str,
        command: str,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        output_cap: int,
    ) -> BackgroundJob:
        """Start ``argv`` as a job of ``session_id`` and tell the listeners.

        Raises OSError when the command cannot be started.
        """

        def spawn() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
            )

        # Off the loop (fork and exec block), and shielded: a cancel landing while the
        # thread spawns would leave a running job that nobody holds.
        with anyio.CancelScope(shield=True):
            process = await anyio.to_thread.run_sync(spawn)
        job = BackgroundJob(
            job_id=f"job_{next(_job_numbers)}",
            session_id=session_id,
            tool_call_id=tool_call_id,
            command=command,
            process=process,
            tree=ProcessTree(process.pid),
            buffer=OutputBuffer(output_cap),
        )
        self._jobs[job.job_id] = job
        token = anyio.lowlevel.current_token()
        threading.Thread(target=self._read, args=(job,), daemon=True).start()
        threading.Thread(target=self._watch, args=(job, token), daemon=True).start()
        log.info("background job %s of session %s started", job.job_id, session_id)
        await self._notify(session_id)
        return job

    async def stop_session(self, session_id: str, grace_s: float = _STOP_GRACE_S) -> None:
        """Stop every job of the session (closed or deleted); no listener is told."""
        jobs = self.running(session_id)
        for job in jobs:
            self._jobs.pop(job.job_id, None)  # withdrawn first: its watcher reports nothing
        for job in jobs:
            log.info("background job %s stopped: session %s closed", job.job_id, session_id)
            await _stop(job, grace_s)

    async def stop_all(self, grace_s: float = _STOP_GRACE_S) -> None:
        for session_id in {job.session_id for job in self._jobs.values()}:
            await self.stop_session(session_id, grace_s)

    def kill_all_now(self) -> None:
        """SIGKILL every job at once (interpreter exit: no event loop to wait in)."""
        jobs = list(self._jobs.values())
        self._jobs.clear()
        for job in jobs:
            _kill_tree_now(job.tree)

    # ------------------------------------------------------------------ watcher threads

    @staticmethod
    def _read(job: BackgroundJob) -> None:
        stdout = job.process.stdout
        assert stdout is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(stdout.fileno(), _READ_CHUNK):
                job.add_output(chunk)
        with contextlib.suppress(OSError):
            stdout.close()

    def _watch(self, job: BackgroundJob, token: anyio.lowlevel.EventLoopToken) -> None:
        job.process.wait()
        # What the shell started and left behind ends with it, as for a foreground call.
        tree = job.tree
        tree.signal(signal.SIGTERM)
        if not _gone_within(tree, _LEFTOVER_GRACE_S):
            tree.signal(signal.SIGKILL)
            _gone_within(tree, _LEFTOVER_GRACE_S)
        job.ended.set()
        if self._jobs.pop(job.job_id, None) is None:
            return  # stopped by a close: the session is gone, nobody to tell
        log.info("background job %s ended with %s", job.job_id, job.process.returncode)
        with contextlib.suppress(anyio.RunFinishedError, RuntimeError):
            anyio.from_thread.run(self._notify, job.session_id, token=token)

    async def _notify(self, session_id: str) -> None:
        for listener in list(self._listeners):
            try:
                await listener(session_id)
            except Exception:
                log.exception("background job listener failed for session %s", session_id)


def _gone_within(tree: ProcessTree, limit_s: float) -> bool:
    """Wait (in a watcher thread) up to ``limit_s`` for ``tree`` to be empty."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if not tree.alive():
            return True
        time.sleep(0.05)  # a thread of its own: nothing to wait on but /proc
    return not tree.alive()


async def _stop(job: BackgroundJob, grace_s: float) -> None:
    """SIGTERM the job's tree, SIGKILL what is left after ``grace_s``, wait until it is gone."""
    job.tree.signal(signal.SIGTERM)
    if not await job.tree.wait_gone(grace_s):
        job.tree.signal(signal.SIGKILL)
        await job.tree.wait_gone(grace_s, signum=signal.SIGKILL)
    # The watcher thread reaps the shell; wait for it so no zombie is left behind.
    await anyio.to_thread.run_sync(job.ended.wait, grace_s * 2 + _LEFTOVER_GRACE_S * 2)


def _stop_at_exit(ref: weakref.ReferenceType[BackgroundJobs]) -> None:
    jobs = ref()
    if jobs is not None:
        jobs.kill_all_now()
