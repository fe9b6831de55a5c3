"""Every process an agent under test started, found from ``/proc``, so the checker can stop
them all.

The agent runs in a session of its own, so its process group is most of it; but a child may
leave both (``setsid()``), and once its parent exits it is re-parented to init and no longer
looks related. Three ways find it:

- its group or session is the agent's;
- it descends (by parent pid) from a process already found;
- its environment carries the marker the checker gave the agent (``MARKER_VAR`` with a token
  of this process); children inherit it, whatever they detach from.

A process once found is remembered by pid and start time (a reused pid is another process),
so a look before the agent exits keeps what only its parentage showed. Elsewhere than Linux
nothing is found and only the process group is stopped.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MARKER_VAR", "AgentTree"]

#: The environment variable that marks every process of one agent under test.
MARKER_VAR = "ACP_CONFORMANCE_AGENT_TOKEN"

_PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class _Stat:
    state: str
    ppid: int
    pgrp: int
    session: int
    #: Clock ticks after boot; with the pid it names one process for good.
    start: int


def _stat(entry: Path) -> _Stat | None:
    try:
        text = entry.joinpath("stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None  # gone meanwhile
    # The command name (field 2) may hold spaces and parentheses: count after its ")".
    fields = text[text.rfind(")") + 2 :].split()
    if len(fields) < 20:
        return None
    return _Stat(fields[0], int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))


def _table(proc: Path) -> dict[int, _Stat]:
    table: dict[int, _Stat] = {}
    try:
        entries = list(proc.iterdir())
    except OSError:
        return table
    for entry in entries:
        if entry.name.isdigit() and (stat := _stat(entry)) is not None:
            table[int(entry.name)] = stat
    return table


def _marked(proc: Path, pid: int, marker: bytes) -> bool:
    try:
        environ = proc.joinpath(str(pid), "environ").read_bytes()
    except OSError:
        return False
    return environ.startswith(marker) or b"\0" + marker in environ


class AgentTree:
    """The processes of the agent whose pid (and session) is ``leader``."""

    def __init__(self, leader: int, token: str, *, proc: Path = _PROC) -> None:
        self.leader = leader
        self.proc = proc
        self._marker = f"{MARKER_VAR}={token}\0".encode()
        #: pid -> start time of every process found so far.
        self._found: dict[int, int] = {}

    def scan(self) -> list[int]:
        """The live (not zombie) processes of the tree other than the leader itself."""
        table = _table(self.proc)
        if not table:
            return []
        born = table[self.leader].start if self.leader in table else 0
        found = {
            pid
            for pid, stat in table.items()
            if self.leader in (stat.pgrp, stat.session)
            or self._found.get(pid) == stat.start
            # Only processes started after the agent can carry its marker: the others'
            # environments are not read at all.
            or (stat.start >= born and _marked(self.proc, pid, self._marker))
        }
        children: dict[int, list[int]] = {}
        for pid, stat in table.items():
            children.setdefault(stat.ppid, []).append(pid)
        pending = [*found, self.leader]
        while pending:
            for child in children.get(pending.pop(), ()):
                if child not in found:
                    found.add(child)
                    pending.append(child)
        found -= {os.getpid(), self.leader}
        for pid in found:
            self._found[pid] = table[pid].start
        return sorted(pid for pid in found if table[pid].state != "Z")

    def kill(self) -> int:
        """SIGKILL every live process of the tree; how many there were."""
        members = self.scan()
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return len(members)
