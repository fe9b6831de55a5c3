"""The checker stops everything an agent started (issue 34, item 14): a child that left the
agent's session with ``setsid()`` is found from ``/proc`` (as a descendant while the agent
runs, by the environment marker after) and killed with it, and ``shutdown.no-orphans`` says
that it outlived the agent."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from acp_conformance.harness.process_tree import MARKER_VAR, AgentTree
from acp_conformance.outcomes import Verdict

from tests.checker.checks.conformance_checker_support import FIXTURES, run_checker

pytestmark = pytest.mark.subprocess

HOSTILE_AGENT = FIXTURES / "hostile_agent.py"


def gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (a zombie waiting for init counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state == "Z"


def test_setsid_children_of_the_agent_are_stopped_and_reported(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    result = run_checker(
        [sys.executable, str(HOSTILE_AGENT), "setsid-child"],
        only=["shutdown.no-orphans", "init.responds"],
        agent_env=[("HOSTILE_PID_FILE", str(pids))],
    )
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) >= len(result.runs) >= 1  # the preflight's process too
    assert all(gone(pid) for pid in started), started
    item = result.results["shutdown.no-orphans"]
    assert item.verdict is Verdict.FAIL, item.reason


def test_a_detached_process_is_found_by_its_marker_after_its_parent_is_gone(
    tmp_path: Path,
) -> None:
    token = uuid.uuid4().hex
    # A parent that starts a setsid() child and exits at once: the child is re-parented to
    # init, outside the leader's session and group, so only the marker finds it.
    script = (
        "import subprocess, sys; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], "
        "start_new_session=True); print(p.pid, flush=True)"
    )
    env = {**os.environ, MARKER_VAR: token}
    leader = subprocess.Popen(
        [sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, start_new_session=True
    )
    assert leader.stdout is not None
    child = int(leader.stdout.readline())
    leader.wait(timeout=30)
    try:
        tree = AgentTree(leader.pid, token)
        assert child in tree.scan()
        assert tree.kill() >= 1
        deadline = time.monotonic() + 30
        while not gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)  # a bounded poll for the kernel to take the killed process away
        assert gone(child)
        assert AgentTree(leader.pid, uuid.uuid4().hex).scan() == []  # another token: not ours
    finally:
        if not gone(child):
            os.kill(child, 9)
