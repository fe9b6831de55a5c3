"""Runs the client command once for a scenario, with the agent double as its ``{agent}``.

The only job here is the process: substitute the placeholders, start it in its own process
group, bound the whole run by a deadline (killing the group when it runs out) and collect
what the double recorded plus the client's exit status and stderr tail.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..harness.limits import oversized_reason
from ..harness.recorder import NOT_JSON, Direction, Frame, parse_line

AGENT_PLACEHOLDER = "{agent}"
#: An argument that is exactly this becomes the double's command as separate words, for
#: clients that take the agent as ``PROGRAM ARGS...`` rather than as one command string.
AGENT_WORDS_PLACEHOLDER = "{agent-words}"
SCENARIO_PLACEHOLDER = "{scenario}"
STDERR_TAIL = 2000


@dataclass
class ScenarioRun:
    """What one run of the client command left behind."""

    scenario: str
    frames: list[Frame] = field(default_factory=list)
    workdir: Path | None = None
    returncode: int | None = None
    timed_out: bool = False
    #: Why the client command could not be started at all (not found, not executable).
    start_error: str | None = None
    stderr_tail: str = ""

    @property
    def reached_double(self) -> bool:
        """Whether the client started the double and wrote to it."""
        return any(f.direction == "c2a" for f in self.frames)

    def describe_exit(self) -> str:
        if self.start_error:
            return self.start_error
        if self.timed_out:
            return "still running at the deadline (killed)"
        return f"exit status {self.returncode}"


def double_command(scenario: str, record: Path, timeout: float) -> str:
    """The shell-quoted command that starts the agent double (what ``{agent}`` becomes)."""
    return shlex.join(
        [
            sys.executable,
            "-m",
            "acp_conformance.client.double",
            "--scenario",
            scenario,
            "--record",
            str(record),
            "--timeout",
            str(timeout),
        ]
    )


def client_argv(argv: list[str], agent: str, scenario: str) -> list[str]:
    out: list[str] = []
    for arg in argv:
        if arg == AGENT_WORDS_PLACEHOLDER:
            out.extend(shlex.split(agent))
        else:
            filled = arg.replace(AGENT_PLACEHOLDER, agent)
            out.append(filled.replace(SCENARIO_PLACEHOLDER, scenario))
    return out


def read_record(path: Path) -> list[Frame]:
    """The double's record as checker frames (in the order the double saw them). The
    double keeps the record within its budget, and it is read a line at a time."""
    frames: list[Frame] = []
    if not path.exists():
        return frames
    with path.open(encoding="utf-8", errors="replace") as record:
        for line in record:
            try:
                entry = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(entry, dict):
                continue
            raw = str(entry.get("line", "")).encode("utf-8", errors="replace")
            oversized = entry.get("oversized")
            message: Any
            error: str | None
            if isinstance(oversized, int) and oversized > len(raw):
                message, error = NOT_JSON, oversized_reason(oversized, finished=True)
            else:
                oversized = 0
                message, error = parse_line(raw)
            direction: Direction = "c2a" if entry.get("dir") == "c2a" else "a2c"
            t = entry.get("t", 0.0)
            frame = Frame(
                len(frames),
                float(t) if isinstance(t, int | float) else 0.0,
                direction,
                raw,
                message,
                error,
            )
            frame.oversized = oversized
            frames.append(frame)
    return frames


def run_scenario(
    argv: list[str],
    scenario: str,
    workdir: Path,
    timeout: float,
    deadline: float,
    stdin_text: str | None = None,
) -> ScenarioRun:
    """Run the client for ``scenario`` in ``workdir``; ``deadline`` bounds the whole run and
    ``timeout`` each wait of the double. ``stdin_text`` is the client's whole standard input
    (none by default)."""
    workdir.mkdir(parents=True, exist_ok=True)
    record = workdir / "acp-conformance-record.ndjson"
    run = ScenarioRun(scenario, workdir=workdir)
    env = dict(os.environ)
    env.setdefault("HOME", str(workdir))
    try:
        proc = subprocess.Popen(
            client_argv(argv, double_command(scenario, record, timeout), scenario),
            cwd=workdir,
            stdin=subprocess.DEVNULL if stdin_text is None else subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=env,
        )
    except OSError as exc:
        run.start_error = f"the client command could not be started: {exc.strerror or exc}"
        return run
    try:
        stdin = None if stdin_text is None else stdin_text.encode()
        _, err = proc.communicate(stdin, timeout=deadline)
    except subprocess.TimeoutExpired:
        run.timed_out = True
        _kill_group(proc)
        _, err = proc.communicate()
    run.returncode = proc.returncode
    _kill_group(proc)  # the double and anything else the client left behind
    run.stderr_tail = err.decode("utf-8", errors="replace")[-STDERR_TAIL:]
    run.frames = read_record(record)
    return run


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
