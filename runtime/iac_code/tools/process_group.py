"""Run a command in its own process group and make sure nothing of it outlives the call.

The command starts in a new session (``start_new_session=True``), so its process group id is
its pid and every child it forks — unless the child deliberately detaches with ``setsid`` —
stays in that group. When the command finishes, times out or the call is cancelled, the
whole group gets SIGTERM, then SIGKILL after a grace period. Background jobs a command leaves
behind (``sleep 1000 &``) are stopped too: a tool call must not leave processes running.
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


def _group_has_live_members(pgid: int) -> bool:
    """True while a non-zombie process is left in the group (zombies cannot be killed)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_text = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command name: state ppid pgrp ...
        fields = stat_text.rsplit(")", 1)[-1].split()
        if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def terminate_group(process: anyio.abc.Process, pgid: int, grace_s: float) -> None:
    """SIGTERM the group, wait up to ``grace_s`` for it to empty, then SIGKILL it.

    Also reaps the group leader so it does not stay a zombie.
    """
    _signal_group(pgid, signal.SIGTERM)
    with anyio.move_on_after(grace_s):
        while True:
            if process.returncode is None:
                with anyio.move_on_after(_POLL_S):
                    await process.wait()
            if process.returncode is not None and not _group_has_live_members(pgid):
                return
            await anyio.sleep(_POLL_S)
    _signal_group(pgid, signal.SIGKILL)
    await process.wait()


async def wait_group_gone(pgid: int, limit_s: float) -> bool:
    """Wait up to ``limit_s`` until no live process is left in the group; True if none is.

    After SIGKILL the leader is reaped at once, but other members die a moment later. There
    is nothing to wait on but ``/proc``, so this polls briefly.
    """
    with anyio.move_on_after(limit_s):
        while True:  # nothing to wait on but /proc: poll
            if not _group_has_live_members(pgid):
                return True
            await anyio.sleep(_POLL_S)
    return False


async def _pump(stream: anyio.abc.ByteReceiveStream, buffer: OutputBuffer) -> None:
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError):
        async for chunk in stream:
            buffer.add(chunk)


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
    process = await anyio.open_process(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    pgid = process.pid
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
            await terminate_group(process, pgid, grace_s)
            # Everything that could write is gone, so EOF comes at once — unless a process
            # that detached itself still holds the pipe; do not wait for that one.
            with anyio.move_on_after(grace_s):
                await pump_done.wait()
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None or _group_has_live_members(pgid):
                await terminate_group(process, pgid, grace_s)
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
