"""CPU time of the processes left in an agent's process group.

The checker counts an agent's CPU through ``RUSAGE_CHILDREN`` once it has reaped the agent,
which includes only the descendants the agent itself waited for. An agent that starts a
helper per session and never reaps it (claude-agent-acp runs a Claude Code process for each
``session/new``) leaves that work out: its run read as 24 CPU-s and as a light check to the
peers scheduler. The shutdown ladder reads what those leftovers used here, from ``/proc``,
just before it kills them. Elsewhere than Linux it reads 0.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["leftover_cpu_seconds"]

_PROC = Path("/proc")


def leftover_cpu_seconds(pgid: int, *, proc: Path = _PROC) -> float:
    """User + system seconds of every live process in group ``pgid`` (their reaped children
    included), 0.0 when ``/proc`` cannot be read."""
    try:
        ticks = os.sysconf("SC_CLK_TCK")
        entries = list(proc.iterdir())
    except (OSError, ValueError):
        return 0.0
    total = 0
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue  # gone meanwhile
        total += _group_ticks(stat, pgid)
    return total / ticks


def _group_ticks(stat: str, pgid: int) -> int:
    """utime + stime + cutime + cstime of one ``/proc/PID/stat`` line when its process is
    in group ``pgid``, else 0. The command name (field 2) may hold spaces and parentheses,
    so the fields are counted from its closing parenthesis."""
    fields = stat[stat.rfind(")") + 2 :].split()
    # After the name: state, ppid, pgrp, ... utime is field 14 of the whole line, so 11 here.
    if len(fields) < 15 or fields[2] != str(pgid):
        return 0
    return sum(int(value) for value in fields[11:15])
