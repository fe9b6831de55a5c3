"""The agent under test as an operating-system process, and its shutdown ladder.

The agent runs in its own session (and therefore its own process group) so that the checker
can signal the agent together with every child it spawned, and can tell afterwards whether
anything in that group outlived the agent. Children that left the group (``setsid()``) are
found from ``/proc`` (:mod:`.process_tree`) and stopped with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import anyio
from anyio.abc import Process

from .group_cpu import leftover_cpu_seconds
from .process_tree import MARKER_VAR, AgentTree


class Rung(StrEnum):
    """Which step of the shutdown ladder ended the process."""

    ALREADY_EXITED = "already-exited"  # it was gone before the checker asked it to stop
    STDIN_EOF = "stdin-eof"  # it exited on its own after stdin closed
    SIGTERM = "sigterm"
    SIGKILL = "sigkill"
    STUCK = "stuck"  # not even SIGKILL reaped it within the bound


class AgentStartError(Exception):
    """The agent command could not be started (not found, not executable, ...)."""


@dataclass
class ExitRecord:
    """How one agent process ended."""

    rung: Rung
    returncode: int | None
    #: Processes of the agent's group still alive after the agent itself exited.
    orphans: bool
    #: When the ladder ended (wall clock, seconds since the epoch).
    at: float = field(default_factory=time.time)
    #: When the checker began stopping the process (wall clock): unlike ``at``, it does not
    #: depend on how soon a loaded machine lets the process exit.
    began: float = 0.0
    #: How long the process was given to exit after stdin closed, when that was shorter than
    #: the other rungs' wait (None: the same wait).
    eof_wait: float | None = None
    #: CPU seconds the group's leftover processes had used when they were killed (their
    #: parent never reaped them, so ``RUSAGE_CHILDREN`` does not see them).
    leftover_cpu: float = 0.0

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "rung": self.rung.value,
            "returncode": self.returncode,
            "orphans": self.orphans,
        }
        if self.eof_wait is not None:
            out["eofWait"] = self.eof_wait
        if self.leftover_cpu:
            out["leftoverCpuSeconds"] = round(self.leftover_cpu, 2)
        return out


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class AgentProcess:
    """A started agent with piped stdin/stdout/stderr."""

    def __init__(self, process: Process, token: str = "") -> None:
        self.process = process
        self.pid = process.pid
        self.exit: ExitRecord | None = None
        #: Everything the agent started, setsid() children included (see `AgentTree`).
        self.tree = AgentTree(process.pid, token or uuid.uuid4().hex)

    @classmethod
    async def start(cls, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path) -> AgentProcess:
        token = uuid.uuid4().hex
        try:
            process = await anyio.open_process(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=str(cwd),
                env={**env, MARKER_VAR: token},
                start_new_session=True,
            )
        except OSError as exc:
            raise AgentStartError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
        return cls(process, token)

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def _wait(self, seconds: float) -> bool:
        with anyio.move_on_after(seconds):
            await self.process.wait()
            return True
        return False

    async def shutdown(self, grace: float = 2.0, *, eof_grace: float | None = None) -> ExitRecord:
        """Close stdin, then SIGTERM the group, then SIGKILL it; remember which rung worked.

        ``grace`` bounds each wait (``eof_grace``, when given, the wait after stdin closes).
        Whatever the rung, the whole group is SIGKILLed at the end so the checker never leaves
        processes behind.
        """
        if self.exit is not None:
            return self.exit
        began = time.time()
        eof_wait = grace if eof_grace is None else min(grace, eof_grace)
        # A look while the agent still runs: a child that left its session (setsid) is
        # found as its descendant now, not once the agent has exited.
        self.tree.scan()
        if self.process.returncode is not None:
            rung = Rung.ALREADY_EXITED
        else:
            rung = await self._climb_ladder(grace, eof_wait)
        stray = self.tree.scan()
        orphans = _group_alive(self.pid) or bool(stray)
        leftover_cpu = 0.0
        if orphans:
            leftover_cpu = leftover_cpu_seconds(self.pid)
            _signal_group(self.pid, signal.SIGKILL)
            self.tree.kill()
        await self._close_pipes()
        self.exit = ExitRecord(
            rung=rung,
            returncode=self.process.returncode,
            orphans=orphans,
            eof_wait=eof_wait if eof_wait < grace else None,
            leftover_cpu=leftover_cpu,
            began=began,
        )
        return self.exit

    async def _climb_ladder(self, grace: float, eof_wait: float) -> Rung:
        if self.process.stdin is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await self.process.stdin.aclose()
                except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
        if await self._wait(eof_wait):
            return Rung.STDIN_EOF
        _signal_group(self.pid, signal.SIGTERM)
        if await self._wait(grace):
            return Rung.SIGTERM
        _signal_group(self.pid, signal.SIGKILL)
        if await self._wait(grace):
            return Rung.SIGKILL
        return Rung.STUCK

    async def _close_pipes(self) -> None:
        # stdin too: an agent that exited before the ladder (it was never climbed) still has
        # it open, and an unclosed pipe outlives the event loop.
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with anyio.CancelScope(shield=True):
                    try:
                        await stream.aclose()
                    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass
        for fd in (0, 1, 2):
            _drop_pipe(self.process, fd)

    def stop_reading_stdout(self) -> None:
        """Close the read end of the agent's stdout: an agent still writing (a flood) gets
        EPIPE instead of blocking on a full pipe until the ladder's SIGTERM."""
        _drop_pipe(self.process, 1)


def _drop_pipe(process: Process, fd: int) -> None:
    """Close the event loop's transport of one of ``process``'s pipes at once. anyio's stream
    wrappers leave it open (closing them ends reading, not the pipe), and a stdin transport
    with unwritten data waits for the agent to read it: ``abort`` does not. Only the asyncio
    backend has such transports (``_transport`` is private to anyio, hence the guard)."""
    transport = getattr(process, "_transport", None)
    pipe = transport.get_pipe_transport(fd) if transport is not None else None
    if pipe is None or pipe.is_closing():
        return
    if hasattr(pipe, "abort"):
        pipe.abort()
    else:
        pipe.close()
