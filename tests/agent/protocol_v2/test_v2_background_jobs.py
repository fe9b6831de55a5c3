"""v2 ``background`` on state updates: a ``bash`` job a turn leaves running, through a real
``iac-code acp`` process.

The job is listed on the state updates while it runs (each entry names the tool call that
started it), the list is sent again, empty, when it ends, and it is stopped, with everything
it started, when its session closes or the agent exits. Every wait is bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn

from tests.agent.process.stdio_harness import BlockingAgent, allow_permission, spawn
from tests.agent.protocol_v2.v2_kit_support import (
    MODEL_WAIT,
    is_idle,
    is_state,
    session_updates,
    start_v2,
    v2_problems,
)
from tests.agent.turn_tools.agent_tools_kit import pid_alive, wait_for_file

pytestmark = pytest.mark.subprocess

CALL_ID = "bg_call"
BACKGROUND = "BACKGROUND:"  # the model runs the rest of the prompt as a background job
# A shell and its child write their pids; the shell exits when a `stop` file appears.
JOB = (
    "echo $$ > shell.pid; sleep 300 & echo $! > child.pid; "
    "while [ ! -e stop ]; do sleep 0.05; done; kill $!"
)
STARTED_TEXT = "It runs in the background."


def _route(body: dict[str, Any]) -> Turn | dict[str, Any]:
    last = body["messages"][-1]["content"]
    if isinstance(last, list) and any(block.get("type") == "tool_result" for block in last):
        return Turn().text(STARTED_TEXT)
    text = last if isinstance(last, str) else " ".join(b.get("text", "") for b in last)
    if text.startswith(BACKGROUND):
        command = text[len(BACKGROUND) :].strip()
        return Turn().tool_use("bash", {"command": command, "background": True}, id=CALL_ID)
    return {"echo": True}


@pytest.fixture(scope="module")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(_route) as server:
        yield server


def _pid(path: Path) -> int:
    return int(anyio.run(wait_for_file, path, MODEL_WAIT))


def _start_job(agent: BlockingAgent, workspace: Path) -> tuple[str, int, int, int]:
    """A v2 session whose turn left the job running: (session id, idle index, pids)."""
    start_v2(agent)
    session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
    prompt = [{"type": "text", "text": f"{BACKGROUND} {JOB}"}]
    answered = agent.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
    allow_permission(agent, answered.index, timeout=MODEL_WAIT)
    idle = agent.wait_frame(is_idle, start=answered.index, timeout=MODEL_WAIT)
    return session_id, idle, _pid(workspace / "shell.pid"), _pid(workspace / "child.pid")


def _states(frames: list[Any], session_id: str) -> list[dict[str, Any]]:
    return [
        u for _, u in session_updates(frames, session_id) if u["sessionUpdate"] == "state_update"
    ]


def test_the_job_is_listed_while_it_runs_and_the_list_clears_when_it_ends(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        session_id, idle, shell_pid, child_pid = _start_job(agent, workspace)
        (workspace / "stop").write_text("")
        cleared = agent.wait_frame(
            lambda f: is_state(f, "idle") and f["params"]["update"].get("background") == [],
            start=idle + 1,
            timeout=MODEL_WAIT,
        )
        states = _states(agent.frames[: cleared + 1], session_id)
        problems = v2_problems(agent)
        shell_gone, child_gone = not pid_alive(shell_pid), not pid_alive(child_pid)
    listed = {"type": "tool_call", "toolCallId": CALL_ID}
    # While the turn ran, a running update listed the job as soon as it started ...
    started = next(s for s in states if s["state"] == "running" and s.get("background"))
    assert {k: started["background"][0][k] for k in listed} == listed
    assert started["background"][0]["_meta"]["iac_code"]["jobId"].startswith("job_")
    # ... the turn's idle still lists it (the job outlived the turn) ...
    turn_end = next(s for s in states if s["state"] == "idle" and "stopReason" in s)
    assert turn_end["stopReason"] == "end_turn"
    assert [{k: w[k] for k in listed} for w in turn_end["background"]] == [listed]
    # ... and once it ended, the state comes again with an empty list and no stop reason.
    assert states[-1] == {"sessionUpdate": "state_update", "state": "idle", "background": []}
    assert shell_gone and child_gone  # what the job started ended with it
    assert problems == []  # every update valid against the v2 schema


@pytest.mark.parametrize("method", ["session/close", "session/delete"])
def test_closing_the_session_stops_the_job_and_everything_it_started(
    method: str, llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        session_id, _, shell_pid, child_pid = _start_job(agent, workspace)
        assert pid_alive(shell_pid) and pid_alive(child_pid)  # the turn ended, the job did not
        closed = agent.call(method, {"sessionId": session_id}, timeout=MODEL_WAIT)
        # The close is answered once the job's process tree is gone.
        shell_gone, child_gone = not pid_alive(shell_pid), not pid_alive(child_pid)
        alive = agent.call("session/list", {})
    assert closed.result == {}, closed.frame
    assert shell_gone and child_gone
    assert "result" in alive.frame


def test_the_agent_exiting_stops_the_job(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        _, _, shell_pid, child_pid = _start_job(agent, workspace)
        agent.close_stdin()
        code = agent.wait_exit(MODEL_WAIT)
    assert code == 0
    assert not pid_alive(shell_pid) and not pid_alive(child_pid)  # no orphan left behind


def test_v1_clients_see_no_background_field(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        agent.initialize()
        session_id = agent.new_session(workspace)
        started = agent.start_prompt(session_id, f"{BACKGROUND} {JOB}")
        allow_permission(agent, 0, timeout=MODEL_WAIT)
        answer = agent.reply(started, timeout=MODEL_WAIT)
        shell_pid = _pid(workspace / "shell.pid")
        agent.call("session/close", {"sessionId": session_id}, timeout=MODEL_WAIT)
        frames = list(agent.frames)
        shell_gone = not pid_alive(shell_pid)
    assert answer.result["stopReason"] == "end_turn"
    updates = [f["params"]["update"] for f in frames if f.get("method") == "session/update"]
    assert updates and not [u for u in updates if "background" in u]
    assert not [u for u in updates if u["sessionUpdate"] == "state_update"]
    assert shell_gone
