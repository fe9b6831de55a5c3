"""CPU of processes an agent leaves behind in its group: read from /proc before the kill."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from acp_conformance.harness.group_cpu import _group_ticks, leftover_cpu_seconds
from acp_conformance.harness.process import AgentProcess


def _stat(pid: int, name: str, pgrp: int, ticks: tuple[int, int, int, int]) -> str:
    # Fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt
    # cmajflt utime stime cutime cstime priority ...
    utime, stime, cutime, cstime = ticks
    return f"{pid} ({name}) S 1 {pgrp} {pgrp} 0 -1 0 0 0 0 0 {utime} {stime} {cutime} {cstime} 20 0"


def test_ticks_are_read_past_a_command_name_with_spaces_and_parentheses() -> None:
    assert _group_ticks(_stat(7, "node (cli) 2", 42, (10, 5, 3, 2)), 42) == 20
    assert _group_ticks(_stat(7, "node", 41, (10, 5, 3, 2)), 42) == 0
    assert _group_ticks("7 (cut short) S 1", 42) == 0


def test_only_processes_of_the_group_are_summed(tmp_path: Path) -> None:
    for pid, pgrp, ticks in [
        (10, 42, (100, 0, 0, 0)),
        (11, 42, (0, 50, 0, 50)),
        (12, 9, (999, 0, 0, 0)),
    ]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(_stat(pid, "x", pgrp, ticks))
    (tmp_path / "self").mkdir()  # not a pid: skipped
    ticks = os.sysconf("SC_CLK_TCK")
    assert leftover_cpu_seconds(42, proc=tmp_path) == pytest.approx(200 / ticks)


def test_no_proc_reads_zero(tmp_path: Path) -> None:
    assert leftover_cpu_seconds(42, proc=tmp_path / "missing") == 0.0


#: An "agent" that starts a helper it never waits for; the helper burns 0.3 CPU-s, says so
#: on the shared stdout and stays up. The agent exits on stdin EOF, leaving it behind.
_AGENT = textwrap.dedent(
    """
    import subprocess, sys
    helper = (
        "import sys, time\\n"
        "while time.process_time() < 0.3: pass\\n"
        "print('burned', flush=True)\\n"
        "time.sleep(60)\\n"
    )
    subprocess.Popen([sys.executable, "-c", helper])
    sys.stdin.read()
    """
)


@pytest.mark.subprocess
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_helper_left_behind_is_counted_at_shutdown(tmp_path: Path) -> None:
    async def scenario() -> float:
        agent = await AgentProcess.start(
            [sys.executable, "-c", _AGENT], env=dict(os.environ), cwd=tmp_path
        )
        assert agent.process.stdout is not None
        with anyio.fail_after(60):
            seen = b""
            while b"burned" not in seen:
                seen += await agent.process.stdout.receive()
        record = await agent.shutdown(grace=5.0)
        await agent.process.aclose()  # its transport, before the event loop closes
        assert record.orphans
        return record.leftover_cpu

    assert anyio.run(scenario) >= 0.25
