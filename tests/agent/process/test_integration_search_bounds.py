"""A catastrophic grep inside a real ``iac-code acp`` process cannot freeze it (issue 8.1).

ripgrep is hidden (PATH is an empty folder), so the pure-Python engine runs, with the search
deadline set to a few seconds through ``IAC_CODE_SEARCH_TIMEOUT_S``. While the regex
backtracks, the agent still answers ``session/list``, ``session/cancel`` ends the turn, and
stdin EOF ends the process, leaving no search worker behind.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn

from tests.agent.process.stdio_harness import (
    BlockingAgent,
    Frame,
    agent_environment,
    run_agent,
    write_fast_retry_config,
)

pytestmark = pytest.mark.subprocess

SEARCH_TIMEOUT_S = 8
# Waits are generous: the first prompt imports the model SDK, slow on a busy machine.
WAIT_S = 120.0
_tool_ids = itertools.count(1)


def route(body: dict[str, Any]) -> Turn:
    """A grep with a backtracking pattern for every prompt; a short answer after its result."""
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
        return Turn().text("The search did not finish.")
    return Turn().tool_use("grep", {"pattern": "(.*)*y"}, id=f"toolu_grep_{next(_tool_ids)}")


@pytest.fixture(scope="module")
def grep_llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(route) as server:
        yield server


@pytest.fixture
def agent(tmp_path: Path, home: Path, grep_llm: ScriptedLLMServer) -> Iterator[BlockingAgent]:
    write_fast_retry_config(home)
    no_tools = tmp_path / "empty-bin"
    no_tools.mkdir()
    env = agent_environment(home, grep_llm.url)
    env["PATH"] = str(no_tools)  # no rg: the Python engine must run
    env["IAC_CODE_SEARCH_TIMEOUT_S"] = str(SEARCH_TIMEOUT_S)
    with run_agent(env, stderr_path=home / "stderr.log") as process:
        yield process


@pytest.fixture
def backtracking_workspace(workspace: Path) -> Path:
    (workspace / "notes.txt").write_text("x" * 40 + "\n")
    return workspace


def tool_status(status: str) -> Any:
    def matches(frame: Frame) -> bool:
        if frame.get("method") != "session/update":
            return False
        update = frame["params"]["update"]
        return update["sessionUpdate"] == "tool_call_update" and update.get("status") == status

    return matches


def start_grep(agent: BlockingAgent, session_id: str) -> tuple[Any, int]:
    """Prompt for the grep and wait until it runs; returns the prompt id and frame index."""
    start = len(agent.frames)
    prompt_id = agent.start_prompt(session_id, "search the notes")
    return prompt_id, agent.wait_frame(tool_status("in_progress"), start=start, timeout=WAIT_S)


def search_workers_of(home: Path) -> list[int]:
    """Live search worker processes started by the agent that uses ``home``."""
    marker = f"IAC_CODE_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"iac_code.tools.search_worker" in cmdline and marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_catastrophic_grep_times_out_while_the_agent_stays_responsive(
    agent: BlockingAgent, home: Path, backtracking_workspace: Path
) -> None:
    agent.initialize()
    session_id = agent.new_session(backtracking_workspace)

    # 1. The search runs; session/list is answered before it ends; it ends failed.
    prompt_id, running_at = start_grep(agent, session_id)
    listing = agent.call("session/list", {})
    assert [s["sessionId"] for s in listing.result["sessions"]] == [session_id]
    failed_at = agent.wait_frame(tool_status("failed"), start=running_at, timeout=WAIT_S)
    assert listing.index < failed_at
    failed = agent.frames[failed_at]["params"]["update"]
    message = failed["content"][0]["content"]["text"]
    assert f"timed out after {SEARCH_TIMEOUT_S} s" in message
    assert agent.reply(prompt_id, timeout=WAIT_S).result["stopReason"] == "end_turn"

    # 2. session/cancel ends a running search's turn at once.
    prompt_id, running_at = start_grep(agent, session_id)
    agent.notify("session/cancel", {"sessionId": session_id})
    assert agent.reply(prompt_id, timeout=WAIT_S).result["stopReason"] == "cancelled"
    assert search_workers_of(home) == []

    # 3. stdin EOF ends the process while a search runs, and no worker outlives it.
    start_grep(agent, session_id)
    agent.close_stdin()
    assert agent.wait_exit(timeout=WAIT_S) == 0
    assert search_workers_of(home) == []
