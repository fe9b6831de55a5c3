"""ACP terminal authentication end to end: ``iac-code acp --login`` in a real pseudo-terminal
against a scripted key-checking endpoint on 127.0.0.1, then an agent that uses the saved key.

The login runs exactly as a client would run it for the terminal auth method: the agent's
command plus the method's ``args``, in an interactive terminal (Python's ``pty`` module).
"""

from __future__ import annotations

import json
import os
import pty
import select
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.credentials import credentials_path, stored_api_key

from tests.agent.process.stdio_harness import agent_environment, spawn

GOOD_KEY = "sk-ant-good-key-123"
TIMEOUT = 60.0


class _KeyChecker(BaseHTTPRequestHandler):
    """``GET /v1/models``: 200 for GOOD_KEY, 401 for anything else."""

    seen: list[dict[str, str]]

    def do_GET(self) -> None:
        self.server.seen.append({"path": self.path, **dict(self.headers)})  # type: ignore[attr-defined]
        good = self.headers.get("x-api-key") == GOOD_KEY and self.path.startswith("/v1/models")
        body = (
            {"data": [{"id": "claude-test", "type": "model"}], "has_more": False}
            if good
            else {"type": "error", "error": {"type": "authentication_error", "message": "bad"}}
        )
        payload = json.dumps(body).encode()
        self.send_response(200 if good else 401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_args: object) -> None:
        pass


@contextmanager
def key_endpoint() -> Iterator[tuple[str, list[dict[str, str]]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _KeyChecker)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.seen  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(TIMEOUT)


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there any more


class Terminal:
    """A process on the slave side of a pty; the test types on the master side."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self._master, slave = pty.openpty()
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.screen = b""

    def read_until(self, text: bytes, timeout: float = TIMEOUT) -> bytes:
        deadline = time.monotonic() + timeout
        while text not in self.screen:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{text!r} never appeared; screen: {self.screen!r}"
            ready, _, _ = select.select([self._master], [], [], remaining)
            if ready and not self._read_some():
                raise AssertionError(f"{text!r} never appeared; screen: {self.screen!r}")
        return self.screen

    def _read_some(self) -> bool:
        try:
            data = os.read(self._master, 4096)
        except OSError:  # EIO: the child closed its side
            return False
        self.screen += data
        return bool(data)

    def type(self, text: str) -> None:
        os.write(self._master, text.encode())

    def finish(self, timeout: float = TIMEOUT) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self._master], [], [], 0.2)
            if ready and not self._read_some():
                break
            if not ready and self.process.poll() is not None:
                break
        code = self.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        os.close(self._master)
        return code


def login_terminal(home: Path, base_url: str, *extra_env: tuple[str, str]) -> Terminal:
    env = agent_environment(home, base_url, api_key=None)
    env.update(extra_env)
    # The command an editor runs for the terminal method: its agent command + the args.
    return Terminal([sys.executable, "-m", "iac_code.cli", "acp", "--login"], env)


def test_terminal_login_saves_a_checked_key_without_echoing_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with key_endpoint() as (url, seen):
        terminal = login_terminal(home, url)
        terminal.read_until(b"input hidden")
        terminal.type(GOOD_KEY + "\n")
        code = terminal.finish()
    screen = terminal.screen.decode(errors="replace")
    assert code == 0, screen
    assert GOOD_KEY not in screen  # typed without echo, never printed
    assert "Logged in" in screen
    assert len(seen) == 1 and seen[0]["path"].startswith("/v1/models")  # one cheap request
    assert stored_api_key(home) == GOOD_KEY
    assert stat.S_IMODE(os.stat(credentials_path(home)).st_mode) == 0o600


def test_terminal_login_with_a_rejected_key_saves_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with key_endpoint() as (url, _seen):
        terminal = login_terminal(home, url)
        terminal.read_until(b"input hidden")
        terminal.type("sk-wrong\n")
        code = terminal.finish()
    screen = terminal.screen.decode(errors="replace")
    assert code == 1
    assert "rejected this API key (HTTP 401)" in screen
    assert not credentials_path(home).exists()


def test_terminal_login_reports_an_unreachable_endpoint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    terminal = login_terminal(home, closed_port_url())
    terminal.read_until(b"input hidden")
    terminal.type(GOOD_KEY + "\n")
    code = terminal.finish()
    screen = terminal.screen.decode(errors="replace")
    assert code == 1
    assert "Could not reach http://127.0.0.1:" in screen
    assert not credentials_path(home).exists()


def test_an_empty_key_or_end_of_input_saves_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    terminal = login_terminal(home, closed_port_url())
    terminal.read_until(b"input hidden")
    terminal.type("\n")
    assert terminal.finish() == 1
    assert b"No key entered" in terminal.screen
    assert not credentials_path(home).exists()


def _logout(home: Path) -> subprocess.CompletedProcess[str]:
    env = agent_environment(home, None, api_key=None)
    return subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "acp", "--logout"],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_later_sessions_use_the_saved_key_and_logout_removes_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with key_endpoint() as (url, _seen):
        terminal = login_terminal(home, url)
        terminal.read_until(b"input hidden")
        terminal.type(GOOD_KEY + "\n")
        assert terminal.finish() == 0
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedLLMServer(Turn().text("saved key works").to_dict()) as llm:
        with spawn(home, llm.url, api_key=None) as agent:
            agent.call("initialize", {"protocolVersion": 1})
            session_id = agent.new_session(workspace)
            reply = agent.call(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]},
                timeout=TIMEOUT,
            )
            assert reply.result["stopReason"] == "end_turn"
        assert llm.model_requests[-1].api_key == GOOD_KEY
        with spawn(home, llm.url, api_key="env-key") as agent:  # the environment wins
            agent.call("initialize", {"protocolVersion": 1})
            session_id = agent.new_session(workspace)
            agent.call(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]},
                timeout=TIMEOUT,
            )
        assert llm.model_requests[-1].api_key == "env-key"
    first, second = _logout(home), _logout(home)
    assert first.returncode == 0 and "Logged out" in first.stderr
    assert second.returncode == 0 and "Not logged in" in second.stderr
    assert not credentials_path(home).exists()
