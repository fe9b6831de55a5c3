"""Nothing answered is lost (issue 32): the start-up fast path answers ``session/new`` only once
the session is on disk, a store that refuses it gets the runtime's error, and ``kill -9`` at
any moment after the answer leaves a session the next process loads and lists."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer
from iac_code import prelude, session_files
from iac_code.settings_core import SessionDefaults
from iac_code.store import SessionStore

from tests.agent.process.stdio_harness import (
    BlockingAgent,
    agent_environment,
    run_agent,
    spawn,
)

INIT = {"protocolVersion": 1, "clientCapabilities": {}}


def _frame(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


def _init_and_new(agent: BlockingAgent, cwd: Path) -> None:
    """initialize and session/new in one write, as an eager editor sends them: the second
    arrives while the runtime still imports, so the fast path is the one to answer it."""
    new = _frame(2, "session/new", {"cwd": str(cwd), "mcpServers": []})
    agent.send_raw(_frame(1, "initialize", INIT) + new)


# -- in process: the window's order of work ---------------------------------------------


class _Importing:
    """Stands for the runtime import thread: alive until ``finish``."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.done.wait, args=(30,), daemon=True)
        self.thread.start()

    def finish(self) -> None:
        self.done.set()
        self.thread.join(30)


@contextlib.contextmanager
def _window(request: bytes) -> Iterator[tuple[prelude._Window, int]]:
    """A fast-path window whose input already holds ``request`` (and stays open)."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    try:
        yield prelude._Window(in_read, out_write, request), out_read
    finally:
        for fd in (in_read, in_write, out_read, out_write):
            os.close(fd)


def _defaults(home: Path) -> SessionDefaults:
    return SessionDefaults({"IAC_CODE_HOME": str(home)})


def test_the_answer_is_written_only_once_the_session_is_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    seen_on_disk: list[bool] = []
    real_write = prelude._write_all

    def write_answer(fd: int, data: bytes) -> None:
        session_id = json.loads(data)["result"]["sessionId"]
        seen_on_disk.append(SessionStore(home).get_meta(session_id) is not None)
        real_write(fd, data)

    monkeypatch.setattr(prelude, "_write_all", write_answer)
    importing = _Importing()
    request = _frame(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    with _window(request) as (window, out):
        serving = threading.Thread(target=window.serve, args=(_defaults(home), importing.thread))
        serving.start()
        answer = json.loads(_read_line(out))
        importing.finish()  # the window ends with the import
        serving.join(30)
        assert not serving.is_alive()
    assert seen_on_disk == [True]
    assert [s.session_id for s in window.sessions] == [answer["result"]["sessionId"]]
    assert window.buffer == b""


def test_a_store_that_refuses_the_session_leaves_the_request_to_the_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(*args: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(session_files, "_replace", disk_full)
    importing = _Importing()
    request = _frame(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    try:
        with _window(request) as (window, out):
            window.serve(_defaults(tmp_path / "home"), importing.thread)  # returns at once
            assert not _readable(out)  # no answer: the runtime gives the store's error
    finally:
        importing.finish()
    assert window.sessions == [] and window.buffer == request
    assert list((tmp_path / "home" / "sessions").iterdir()) == []


def _read_line(fd: int) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 65536)  # the writer thread answers or the test hangs up (bounded)
        assert chunk, "the fast path closed without answering"
        data += chunk
    return data


def _readable(fd: int) -> bool:
    import select

    return bool(select.select([fd], [], [], 0)[0])


# -- real processes: a store that refuses the session -----------------------------------


@contextlib.contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A small tmpfs at ``path`` (root only, where mounting is allowed), else a skip."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def _store_errors(home: Path, workspace: Path, log: Path) -> tuple[dict[str, Any], ...]:
    """session/new through the fast path (sent with initialize), then through the runtime."""
    env = agent_environment(home, None)
    with run_agent(env, stderr_path=log) as agent:
        _init_and_new(agent, workspace)
        assert agent.reply(1).result["protocolVersion"] == 1
        early = agent.reply(2).frame.get("error")
        later = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []}).frame
        later = later.get("error", later)
        assert agent.call("session/list", {}).result["sessions"] == []  # still up, nothing kept
        assert agent.all_stdout_is_json()
    return early, later


def _same_error(early: dict[str, Any] | None, later: dict[str, Any] | None, code: str) -> None:
    assert early is not None and later is not None
    assert early["code"] == later["code"] == -32603
    assert early["message"] == later["message"]
    assert early["message"].startswith("The session store cannot be written: ")
    assert early["data"]["errno"] == later["data"]["errno"] == code


def test_a_read_only_store_gets_the_runtime_s_error_through_the_fast_path(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    if os.geteuid() == 0:  # root writes through modes: make a real read-only file system
        with _tmpfs(home, "1m"):
            (home / "config.toml").write_text("")
            subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
            early, later = _store_errors(home, workspace, tmp_path / "agent.log")
        code = "EROFS"
    else:
        home.mkdir()
        home.chmod(0o500)
        try:
            early, later = _store_errors(home, workspace, tmp_path / "agent.log")
        finally:
            home.chmod(0o700)
        code = "EACCES"
    _same_error(early, later, code)


def test_a_full_disk_gets_the_runtime_s_error_through_the_fast_path(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    with _tmpfs(home, "64k"):
        filler = os.open(home / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            with contextlib.suppress(OSError):
                while True:
                    os.write(filler, b"\0" * 4096)
        finally:
            os.close(filler)
        early, later = _store_errors(home, workspace, tmp_path / "agent.log")
    _same_error(early, later, "ENOSPC")


# -- real processes: kill -9 after the answer --------------------------------------------

KILL_TRIALS = 6
#: The answer comes while the runtime still imports (a few hundred ms on a busy machine), so
#: kills spread over that window hit the fast path's and then the runtime's moments.
LATEST_KILL_SECONDS = 0.4


def test_kill_9_at_random_moments_after_the_answer_loses_no_session(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    moments = random.Random(32)
    answered: list[str] = []
    for trial in range(KILL_TRIALS):
        delay = 0.0 if trial == 0 else moments.uniform(0, LATEST_KILL_SECONDS)
        with spawn(home, llm_server.url) as agent:
            _init_and_new(agent, workspace)
            reply = agent.reply(2)
            answered.append(reply.result["sessionId"])
            if delay:
                time.sleep(delay)  # the random kill moment itself, not a synchronisation
            os.kill(agent.pid, signal.SIGKILL)
            assert agent.wait_exit() == -signal.SIGKILL
    with spawn(home, llm_server.url) as agent:
        agent.initialize()
        listed = agent.call("session/list", {"cwd": str(workspace)}).result["sessions"]
        lost = set(answered) - {s["sessionId"] for s in listed}
        assert lost == set(), f"{len(lost)} of {len(answered)} answered sessions not listed"
        for session_id in answered:
            assert "result" in agent.load(session_id, workspace).frame, session_id
