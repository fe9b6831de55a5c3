"""Faults around a real ``iac-code acp`` process: shutdown, crashes, a broken LLM, a broken disk
(SPEC §1 shutdown, §7, §12)."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.llm_routes import GARBAGE, SLOW, TRUNCATE, last_user_text
from tests.agent.process.stdio_harness import BlockingAgent, agent_environment, run_agent, spawn

pytestmark = pytest.mark.subprocess


def start_slow_turn(agent: BlockingAgent, workspace: Path) -> tuple[str, object]:
    """A session whose prompt is streaming (the first chunk has arrived)."""
    agent.initialize()
    session_id = agent.new_session(workspace)
    start = len(agent.frames)
    prompt_id = agent.start_prompt(session_id, f"{SLOW} count slowly")
    agent.wait_update("agent_message_chunk", start=start)
    return session_id, prompt_id


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_stdin_eof_exits_with_status_zero(home: Path, llm_server: ScriptedLLMServer) -> None:
    with spawn(home, llm_server.url) as agent:
        agent.initialize()
        agent.close_stdin()
        assert agent.wait_exit(timeout=120) == 0


def test_stdin_closing_mid_turn_exits_zero_and_keeps_the_user_message(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    with spawn(home, llm_server.url) as agent:
        session_id, prompt_id = start_slow_turn(agent, workspace)
        agent.close_stdin()
        assert agent.wait_exit(timeout=120) == 0
        agent.drain_until_eof()
    answers = [f for f in agent.frames if f.get("id") == prompt_id]
    assert [a["result"]["stopReason"] for a in answers] == ["cancelled"]
    with spawn(home, llm_server.url) as again:
        again.initialize()
        replay = again.load(session_id, workspace)
    assert replay.updates[0]["update"]["sessionUpdate"] == "user_message_chunk"


def test_sigterm_mid_turn_answers_the_prompt_exits_zero_and_the_session_loads(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    with spawn(home, llm_server.url) as agent:
        session_id, prompt_id = start_slow_turn(agent, workspace)
        agent.signal(signal.SIGTERM)
        assert agent.wait_exit(timeout=120) == 0
        agent.drain_until_eof()
        answers = [f for f in agent.frames if f.get("id") == prompt_id]
        assert answers == [{"jsonrpc": "2.0", "id": prompt_id, "result": answers[0]["result"]}]
        assert answers[0]["result"]["stopReason"] == "cancelled"
        assert agent.all_stdout_is_json()
    with spawn(home, llm_server.url) as again:
        again.initialize()
        replay = again.load(session_id, workspace)
    kinds = replay.kinds()
    assert kinds[0] == "user_message_chunk"
    assert replay.updates[0]["update"]["content"]["text"] == f"{SLOW} count slowly"
    assert "agent_message_chunk" in kinds  # the interrupted text was kept


def test_kill_9_mid_turn_leaves_a_session_that_loads_and_prompts_consistently(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    with spawn(home, llm_server.url) as agent:
        session_id, _ = start_slow_turn(agent, workspace)
        agent.signal(signal.SIGKILL)
        assert agent.wait_exit(timeout=120) == -signal.SIGKILL
    with spawn(home, llm_server.url) as again:
        again.initialize()
        replay = again.load(session_id, workspace)
        assert replay.kinds()[0] == "user_message_chunk"
        answer = again.reply(again.start_prompt(session_id, "after the crash"))
    assert answer.result["stopReason"] == "end_turn"
    request = next(
        r for r in llm_server.model_requests if last_user_text(r.body) == "after the crash"
    )
    roles = [m["role"] for m in request.messages]
    assert roles[0] == "user" and roles[-1] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles)), roles


def test_an_unreachable_llm_endpoint_fails_the_prompt_and_the_process_stays_up(
    home: Path, workspace: Path
) -> None:
    with spawn(home, f"http://127.0.0.1:{closed_port()}") as agent:
        agent.initialize()
        session_id = agent.new_session(workspace)
        reply = agent.reply(agent.start_prompt(session_id, "hello?"))
        assert reply.error["code"] == -32603
        assert "Traceback" not in str(reply.error)
        assert "result" in agent.call("session/list", {}).frame
        assert agent.returncode is None


def test_a_broken_llm_answer_fails_the_prompt_and_the_process_stays_up(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    with spawn(home, llm_server.url) as agent:
        agent.initialize()
        session_id = agent.new_session(workspace)
        garbage = agent.reply(agent.start_prompt(session_id, f"{GARBAGE} answer me"))
        truncated = agent.reply(agent.start_prompt(session_id, f"{TRUNCATE} answer me"))
        follow_up = agent.reply(agent.start_prompt(session_id, "are you still there?"))
        assert agent.all_stdout_is_json()
    assert garbage.error["code"] == -32603
    assert truncated.error["code"] == -32603
    partial = [
        u for u in truncated.updates if u["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert len(partial) == 3  # what arrived before the cut, shown once and never repeated
    assert follow_up.result["stopReason"] == "end_turn"


def test_a_failing_session_directory_still_answers_and_corrupts_nothing_else(
    home: Path, workspace: Path, llm_server: ScriptedLLMServer
) -> None:
    with spawn(home, llm_server.url) as agent:
        agent.initialize()
        healthy = agent.new_session(workspace)
        broken = agent.new_session(workspace)
        agent.reply(agent.start_prompt(healthy, "before the fault"))
        # Root ignores permission bits, so break the log by putting a directory in its place.
        events = home / "sessions" / broken / "events.jsonl"
        events.unlink()
        events.mkdir()
        reply = agent.reply(agent.start_prompt(broken, "write this down"))
        assert reply.result["stopReason"] == "end_turn"
        assert "Echo: write this down" in "".join(
            u["update"]["content"]["text"]
            for u in reply.updates
            if u["update"]["sessionUpdate"] == "agent_message_chunk"
        )
        after = agent.reply(agent.start_prompt(healthy, "after the fault"))
        assert after.result["stopReason"] == "end_turn"
        assert "could not persist" in agent.stderr_text
    shutil.rmtree(events)
    with spawn(home, llm_server.url) as again:
        again.initialize()
        replay = again.load(healthy, workspace)
        listed = again.call("session/list", {}).result["sessions"]
    texts = [
        u["update"]["content"]["text"]
        for u in replay.updates
        if u["update"]["sessionUpdate"] == "user_message_chunk"
    ]
    assert texts == ["before the fault", "after the fault"]
    assert {s["sessionId"] for s in listed} == {healthy, broken}


#: Stands in for the model SDK in the agent process: its import lasts until the test opens
#: the gate (or 60 s pass), like a slow first import on a busy machine, but on cue.
_GATED_SDK = """
import os, time
_deadline = time.monotonic() + 60
while not os.path.exists(os.environ["GATE_FILE"]) and time.monotonic() < _deadline:
    time.sleep(0.01)
"""


def test_a_cancel_of_the_first_prompt_does_not_wait_for_the_sdk_import(
    tmp_path: Path, home: Path, workspace: Path
) -> None:
    # The first prompt of a process imports the model SDK. Done on the event loop, that
    # import would keep the cancel (and every other request) unread until it ended; here it
    # never ends before the turn has been cancelled and another request answered.
    fake = tmp_path / "fake-sdk" / "anthropic"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(_GATED_SDK)
    gate = tmp_path / "gate"
    env = agent_environment(home, "http://127.0.0.1:9")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(fake.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    env["GATE_FILE"] = str(gate)
    try:
        with run_agent(env, stderr_path=tmp_path / "stderr.log") as agent:
            agent.initialize()
            session_id = agent.new_session(workspace)
            prompt_id = agent.start_prompt(session_id, "hello")
            agent.notify("session/cancel", {"sessionId": session_id})
            assert agent.reply(prompt_id).result["stopReason"] == "cancelled"
            assert agent.call("session/list", {}).result["sessions"]
            assert not gate.exists()  # all of that while the import was still running
    finally:
        gate.touch()
