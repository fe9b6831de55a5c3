"""Issue 34 item 12 on a real ``iac-code acp``: resuming a long stored session streams its log
(peak memory, VmHWM from /proc, far below the old three copies of the file) in a worker
thread (``session/list`` sent after the resume is answered first), and a huge torn tail is
skipped without being read into memory, then cut off the file."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.store.session_store import EVENTS_FILE, SessionStore

from tests.agent.process.stdio_harness import spawn
from tests.agent.process.test_integration_unread_output import memory_mib

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc"),
]

MIB = 2**20
LOG_MIB = 96
WAIT = 120.0


def _stored_session(home: Path, workspace: Path, *, log_mib: int, torn_tail_mib: int) -> str:
    session_id = secrets.token_urlsafe(18)
    store = SessionStore(home)
    store.create(session_id, str(workspace))
    events = next(home.rglob(session_id)) / EVENTS_FILE
    text = "t" * (32 * 1024)
    record = {"type": "agent_message", "messageId": "m", "content": [{"type": "text"}]}
    with events.open("ab") as out:
        line = (json.dumps({**record, "content": [{"type": "text", "text": text}]}) + "\n").encode()
        for _ in range(log_mib * MIB // len(line)):
            out.write(line)
        if torn_tail_mib:
            out.write(b'{"type":"agent_message","content":"' + b"u" * (torn_tail_mib * MIB))
    return session_id


def _resume_and_list(
    home: Path, workspace: Path, session_id: str
) -> tuple[float, float, list[str]]:
    """Resume, and at once list; peak memory, and which of the two was answered first."""
    with ScriptedLLMServer(Turn().text("unused").to_dict()) as llm, spawn(home, llm.url) as agent:
        agent.call("initialize", {"protocolVersion": 1})
        assert agent.call("session/list", {}).result is not None
        baseline = memory_mib(agent.pid)["VmHWM"]
        resume = agent.start_request(
            "session/resume", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        )
        listing = agent.start_request("session/list", {})
        agent.reply(resume, timeout=WAIT)
        agent.reply(listing, timeout=WAIT)
        peak = memory_mib(agent.pid)["VmHWM"]
        names = {resume: "resume", listing: "list"}
        answered = [
            names[f["id"]]
            for f in agent.frames
            if isinstance(f, dict) and "method" not in f and f.get("id") in names
        ]
    return baseline, peak, answered


def test_a_long_session_resumes_streamed_and_off_the_event_loop(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    session_id = _stored_session(home, workspace, log_mib=LOG_MIB, torn_tail_mib=0)
    baseline, peak, answered = _resume_and_list(home, workspace, session_id)
    # The events themselves stay in memory (the session needs them); the file's bytes, text
    # and split lines are no longer held besides them (~4x the file before).
    assert peak <= baseline + 2 * LOG_MIB, f"VmHWM {peak:.0f} MiB (baseline {baseline:.0f})"
    # The loop stayed free while the log was read: the list sent after it came back first.
    assert answered == ["list", "resume"]


def test_a_huge_torn_tail_is_skipped_unbuffered_and_cut_off(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    session_id = _stored_session(home, workspace, log_mib=1, torn_tail_mib=200)
    events = next(home.rglob(session_id)) / EVENTS_FILE
    baseline, peak, _answered = _resume_and_list(home, workspace, session_id)
    assert peak <= baseline + 100, f"VmHWM {peak:.0f} MiB (baseline {baseline:.0f})"
    assert events.stat().st_size < 2 * MIB  # the torn tail was cut off
    assert events.read_bytes().endswith(b"\n")
