"""Run a command in its own session and make sure nothing of it outlives the call.

The command starts in a new session (``start_new_session=True``), so its session id and
process group id are its pid. Every child it forks stays in that session — ``set -m`` moves
background jobs into process groups of their own, so the group alone is not enough — unless
the child deliberately detaches with ``setsid``; such a child is still found as a
descendant while its parent runs. When the command finishes, times out or the call is
cancelled (the agent exiting cancels it too), every process found this way
(:class:`ProcessTree`, from ``/proc``) gets SIGTERM, then SIGKILL after a grace period.
Background jobs a command leaves behind (``sleep 1000 &``) are stopped too: a tool call must
not leave processes running.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc

_POLL_S = 0.05


def shell_argv(command: str) -> list[str]:
    """Run ``command`` with bash when it is installed, else POSIX sh."""
    shell = shutil.which("bash") or "/bin/sh"
    return [shell, "-c", command]


class OutputBuffer:
    """Keeps the first and the last ``cap // 2`` bytes of a stream and counts the rest."""

    def __init__(self, cap: int) -> None:
        self._head_cap = cap // 2
        self._tail_cap = cap - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            if len(self._tail) > self._tail_cap:
                del self._tail[: len(self._tail) - self._tail_cap]

    @property
    def truncated(self) -> bool:
        return self.total > len(self._head) + len(self._tail)

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if not self.truncated:
            return head + tail
        omitted = self.total - len(self._head) - len(self._tail)
        return f"{head}\n[output truncated: {omitted:,} bytes omitted]\n{tail}"


@dataclass(frozen=True)
class ProcessResult:
    output: str
    exit_code: int | None  # None when killed by a signal
    signal_name: str | None
    timed_out: bool
    output_bytes: int
    truncated: bool


_PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class _Stat:
    state: str
    ppid: int
    pgrp: int
    session: int
    start: int  # clock ticks after boot: with the pid, names one process for good


def _process_table() -> dict[int, _Stat] | None:
    """Every process by pid, from ``/proc``; None without it."""
    if not _PROC.is_dir():
        return None
    table: dict[int, _Stat] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_text = (entry / "stat").read_text()
        except OSError:
            continue  # it exited while we looked
        # Fields after the parenthesised command name: state ppid pgrp session ... and the
        # start time is the 20th of them.
        fields = stat_text.rsplit(")", 1)[-1].split()
        if len(fields) >= 20:
            ppid, pgrp, session, start = (int(fields[i]) for i in (1, 2, 3, 19))
            table[int(entry.name)] = _Stat(fields[0], ppid, pgrp, session, start)
    return table


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ProcessTree:
    """Every process a command started with ``start_new_session`` (its pid: ``leader``).

    That is every process in its session or its process group — ``set -m`` gives each
    background job its own group, but a job stays in the session — plus every descendant of
    those, which catches a child that detached with ``setsid`` while its parent runs. A
    process once found stays found (by pid and start time) after its parent exits, so
    killing a parent first does not let its detached child go. A session id is not reused
    while a process of the session exists, so nothing unrelated matches. Without ``/proc``
    only the process group can be found.
    """

    def __init__(self, leader: int) -> None:
        self.leader = leader
        self._found: dict[int, int] = {}  # pid -> start time

    def members(self) -> list[int] | None:
        """The live (non-zombie) processes of the tree; None when ``/proc`` cannot be read."""
        table = _process_table()
        if table is None:
            return None
        found = {
            pid
            for pid, stat in table.items()
            if self.leader in (stat.pgrp, stat.session) or self._found.get(pid) == stat.start
        }
        children: dict[int, list[int]] = {}
        for pid, stat in table.items():
            children.setdefault(stat.ppid, []).append(pid)
        pending = list(found)
        while pending:
            for child in children.get(pending.pop(), ()):
                if child not in found:
                    found.add(child)
                    pending.append(child)
        found.discard(os.getpid())  # never the agent itself
        for pid in found:
            self._found[pid] = table[pid].start
        return sorted(pid for pid in found if table[pid].state != "Z")

    def alive(self) -> bool:
        """True while a process of the tree is left (zombies cannot be killed)."""
        members = self.members()
        if members is None:
            return _group_alive(self.leader)
        return bool(members)

    def signal(self, signum: int) -> None:
        # Look before signalling: a parent that dies first would hand its children to init.
        members = self.members()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.leader, signum)
        for pid in members or ():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)

    async def terminate(self, process: anyio.abc.Process, grace_s: float) -> None:
        """SIGTERM the tree, wait up to ``grace_s`` for it to exit, then SIGKILL whatever
        is left — again until nothing is, bounded by another ``grace_s``, so that a process
        forking while it is killed is caught too.

        Also reaps the leader (``process``) so it does not stay a zombie.
        """
        self.signal(signal.SIGTERM)
        with anyio.move_on_after(grace_s):
            while True:
                if process.returncode is None:
                    with anyio.move_on_after(_POLL_S):
                        await process.wait()
                if process.returncode is not None and not self.alive():
                    return
                await anyio.sleep(_POLL_S)
        self.signal(signal.SIGKILL)
        await process.wait()
        await self.wait_gone(grace_s, signum=signal.SIGKILL)

    async def wait_gone(self, limit_s: float, *, signum: int | None = None) -> bool:
        """Wait up to ``limit_s`` until no process of the tree is left (sending ``signum``
        to what is left each time); True if none is.

        After SIGKILL the leader is reaped at once, but other members die a moment later.
        There is nothing to wait on but ``/proc``, so this polls briefly.
        """
        with anyio.move_on_after(limit_s):
            while True:  # nothing to wait on but /proc: poll
                if not self.alive():
                    return True
                if signum is not None:
                    self.signal(signum)
                await anyio.sleep(_POLL_S)
        return False


async def _pump(stream: anyio.abc.ByteReceiveStream, buffer: OutputBuffer) -> None:
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError):
        async for chunk in stream:
            buffer.add(chunk)


async def spawn_shielded(
    argv: Sequence[str],
    *,
    cwd: str | Path | None,
    env: Mapping[str, str],
    stdin: int,
    stderr: int,
) -> anyio.abc.Process:
    """Start ``argv`` in a process group of its own, with stdout piped.

    The spawn is shielded from cancellation: the child runs from the fork on, but the caller
    gets its process object only some loop turns later (asyncio still connects the pipes).
    A cancel landing in between (the agent shutting down on a busy machine) would leave no
    one holding the process, and its children running; shielded, the cancel lands at the
    caller's next await, whose cleanup stops the whole tree.
    """
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            list(argv),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    return process


async def run_in_process_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    output_cap: int,
    grace_s: float,
) -> ProcessResult:
    """Run ``argv`` to completion (or timeout) with stdout and stderr combined.

    Cancelling the caller stops the process group and waits for it before re-raising.
    """
    process = await spawn_shielded(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    tree = ProcessTree(process.pid)
    buffer = OutputBuffer(output_cap)
    timed_out = False
    try:
        async with anyio.create_task_group() as group:
            assert process.stdout is not None
            pump_done = anyio.Event()

            async def pump() -> None:
                try:
                    await _pump(process.stdout, buffer)  # type: ignore[arg-type]
                finally:
                    pump_done.set()

            group.start_soon(pump)
            with anyio.move_on_after(timeout_s) as deadline:
                await process.wait()
            timed_out = deadline.cancelled_caught
            await tree.terminate(process, grace_s)
            # Everything that could write is gone, so EOF comes at once — unless a process
            # that detached itself still holds the pipe; do not wait for that one.
            with anyio.move_on_after(grace_s):
                await pump_done.wait()
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None or tree.alive():
                await tree.terminate(process, grace_s)
            await process.aclose()
    code = process.returncode
    signal_name: str | None = None
    exit_code: int | None = code
    if code is not None and code < 0:
        exit_code = None
        try:
            signal_name = signal.Signals(-code).name
        except ValueError:
            signal_name = f"signal {-code}"
    return ProcessResult(
        output=buffer.text(),
        exit_code=exit_code,
        signal_name=signal_name,
        timed_out=timed_out,
        output_bytes=buffer.total,
        truncated=buffer.truncated,
    )
