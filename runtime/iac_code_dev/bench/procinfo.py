"""Memory of a process tree from ``/proc`` (Linux), and a description of the machine.

An agent command may be a wrapper (``npx``, a shell script) whose real server is a child,
so memory is summed over every process of the agent's session (the benchmarks start each
agent with ``start_new_session``, making its pid the session id). The agent's own pid is
read first, so the figure for a single-process agent is taken as early as possible.
"""

from __future__ import annotations

import contextlib
import os
import platform
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class Memory:
    """Resident set now and its high-water mark, in bytes, summed over the tree."""

    rss: int
    hwm: int
    processes: int


def _status_kib(pid: int) -> tuple[int, int] | None:
    try:
        text = (_PROC / str(pid) / "status").read_text()
    except OSError:
        return None
    rss = hwm = 0
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
    return rss, hwm


def _session_of(pid: int) -> int | None:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # Fields after the parenthesised command: state ppid pgrp session ...
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[3]) if len(fields) > 3 else None


def tree_memory(pid: int) -> Memory | None:
    """Memory of ``pid`` plus every other process in its session; None when it is gone."""
    own = _status_kib(pid)
    if own is None:
        return None
    rss, hwm = own
    count = 1
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == pid:
            continue
        if _session_of(int(entry.name)) != pid:
            continue
        other = _status_kib(int(entry.name))
        if other is not None:
            rss += other[0]
            hwm += other[1]
            count += 1
    return Memory(rss=rss * 1024, hwm=hwm * 1024, processes=count)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time consumed so far by ``pid`` (its threads included)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    # utime and stime are fields 14 and 15 of stat(5); 12 and 13 after the command.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in (_PROC / "cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def machine_description() -> dict[str, object]:
    """What the header line reports: enough to judge whether two runs are comparable."""
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    return {
        "nproc": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "kernel": platform.release(),
        "loadavg": [round(x, 2) for x in load],
    }
