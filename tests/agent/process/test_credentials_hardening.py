"""Issue 34 items 3, 4 and 10 over real processes: one credential lookup for v1 and v2, keys
with control characters refused where they are read (environment, saved file, login input)
without ever being shown, and ``iac-code login``/``logout`` failing in one clear line.

Every agent here is a real ``iac-code acp`` subprocess talking to the real anthropic SDK's
target, a scripted endpoint on 127.0.0.1; the login runs in a real pseudo-terminal.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from acp_scripted_llm.script import error_turn
from iac_code.agent.info import API_KEY_AUTH_METHOD_ID
from iac_code.credentials import credentials_path, store_api_key

from tests.agent.process.stdio_harness import agent_environment, spawn
from tests.agent.process.test_integration_terminal_auth import (
    GOOD_KEY,
    TIMEOUT,
    key_endpoint,
    login_terminal,
)

pytestmark = pytest.mark.subprocess

#: The part of the canary key that no output may ever contain (only 4 characters may show).
CANARY_BODY = "CANARY-7d1e5f0a9b"
CANARY = f"sk-a{CANARY_BODY}"
MODEL_WAIT = 60.0
V2_INIT = {"protocolVersion": 2, "info": {"name": "canary-client", "version": "0.1"}}
HI = [{"type": "text", "text": "hi"}]

#: Where a key is read, and how it is broken there.
BROKEN_KEYS = {
    "CR at the end": CANARY + "\r",
    "LF inside": f"sk-a{CANARY_BODY[:6]}\n{CANARY_BODY[6:]}",
    "space inside": f"sk-a{CANARY_BODY[:6]} {CANARY_BODY[6:]}",
    "escape inside": f"sk-a{CANARY_BODY}\x1b[2J",
}


def _everything_written(home: Path, frames: list[Any]) -> str:
    """Every frame the agent sent, and every log line (stderr logs and the log file)."""
    logs = "".join(p.read_text(errors="replace") for p in home.glob("*.log"))
    return json.dumps(frames) + logs


def _prompt_errors(home: Path, llm_url: str, api_key: str | None) -> tuple[list[Any], str]:
    """v1 authenticate and prompt, then a v2 prompt, each in its own agent process."""
    errors: list[Any] = []
    frames: list[Any] = []
    for version in (1, 2):
        debug = ("--log-level", "DEBUG", "--log-file", str(home / "agent-file.log"))
        with spawn(home, llm_url, *debug, api_key=api_key) as agent:
            if version == 1:
                agent.call("initialize", {"protocolVersion": 1})
                errors.append(
                    agent.call("authenticate", {"methodId": API_KEY_AUTH_METHOD_ID}).frame.get(
                        "error"
                    )
                )
            else:
                agent.call("initialize", V2_INIT)
            session_id = agent.new_session(home.parent) if version == 1 else None
            if session_id is None:
                new = agent.call("session/new", {"cwd": str(home.parent)})
                session_id = new.result["sessionId"]
            reply = agent.call(
                "session/prompt", {"sessionId": session_id, "prompt": HI}, timeout=MODEL_WAIT
            )
            errors.append(reply.frame.get("error"))
            # The agent stays up and answers the next request.
            assert agent.call("session/list", {}).result is not None
            frames += agent.frames
    return errors, _everything_written(home, frames)


@pytest.mark.parametrize("key", BROKEN_KEYS.values(), ids=BROKEN_KEYS.keys())
def test_a_broken_environment_key_is_refused_and_never_shown(tmp_path: Path, key: str) -> None:
    home = tmp_path / "home"
    with ScriptedLLMServer(Turn().text("never").to_dict()) as llm:
        errors, written = _prompt_errors(home, llm.url, key)
        assert llm.model_requests == []  # the key never went out
    for error in errors:
        assert error["code"] == -32000, error
        assert "ANTHROPIC_API_KEY" in error["message"] and "'sk-a...'" in error["message"]
    assert CANARY_BODY[:4] not in written


@pytest.mark.parametrize("key", BROKEN_KEYS.values(), ids=BROKEN_KEYS.keys())
def test_a_broken_saved_key_is_refused_and_never_shown(tmp_path: Path, key: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    credentials_path(home).write_text(json.dumps({"anthropicApiKey": key}), encoding="utf-8")
    with ScriptedLLMServer(Turn().text("never").to_dict()) as llm:
        errors, written = _prompt_errors(home, llm.url, None)
        assert llm.model_requests == []
    for error in errors:
        assert error["code"] == -32000, error
        assert "credentials.json" in error["message"] and "'sk-a...'" in error["message"]
    assert CANARY_BODY[:4] not in written


def test_v2_prompts_use_the_key_saved_by_the_terminal_login(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store_api_key(home, GOOD_KEY)
    with ScriptedLLMServer(Turn().text("saved key works").to_dict()) as llm:
        with spawn(home, llm.url, api_key=None) as agent:
            agent.call("initialize", V2_INIT)
            session_id = agent.call("session/new", {"cwd": str(tmp_path)}).result["sessionId"]
            reply = agent.call("session/prompt", {"sessionId": session_id, "prompt": HI})
            assert "messageId" in reply.result, reply.error
            agent.wait_frame(
                lambda f: (
                    f.get("method") == "session/update"
                    and f["params"]["update"].get("state") == "idle"
                ),
                timeout=MODEL_WAIT,
            )
        assert [r.api_key for r in llm.model_requests] == [GOOD_KEY]


# ---------------------------------------------------------------- iac-code login / logout


@contextmanager
def raw_endpoint(answer: bytes, *, trickle: bool = False) -> Iterator[tuple[str, list[bytes]]]:
    """A TCP server on 127.0.0.1 that answers every connection with ``answer`` (whatever the
    request), or with one byte of it per second when ``trickle``; records what it got."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(TIMEOUT)
                try:
                    received.append(conn.recv(65536))
                    if trickle:
                        for byte in answer:
                            if stop.wait(1.0):
                                return
                            conn.sendall(bytes([byte]))
                    else:
                        conn.sendall(answer)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", received
    finally:
        stop.set()
        server.close()
        thread.join(TIMEOUT)


def _login(home: Path, url: str, typed: str, **env: str) -> tuple[int, str]:
    terminal = login_terminal(home, url, *env.items())
    terminal.read_until(b"input hidden")
    terminal.type(typed + "\n")
    code = terminal.finish(timeout=2 * TIMEOUT)
    return code, terminal.screen.decode(errors="replace")


def _one_clear_line(code: int, screen: str, expected: str) -> None:
    assert code == 1, screen
    assert expected in screen, screen
    assert "Traceback" not in screen, screen
    assert GOOD_KEY not in screen and CANARY_BODY[:4] not in screen


def test_login_against_a_server_that_is_not_http(tmp_path: Path) -> None:
    with raw_endpoint(b"SSH-2.0-OpenSSH_9.6\r\n\r\n") as (url, _received):
        code, screen = _login(tmp_path / "home", url, GOOD_KEY)
    _one_clear_line(code, screen, "did not answer like an HTTP server")
    assert not credentials_path(tmp_path / "home").exists()


def test_login_against_a_server_with_too_many_headers(tmp_path: Path) -> None:
    headers = b"".join(b"X-Filler-%d: x\r\n" % n for n in range(150))
    with raw_endpoint(b"HTTP/1.1 200 OK\r\n" + headers + b"\r\n{}") as (url, _received):
        code, screen = _login(tmp_path / "home", url, GOOD_KEY)
    _one_clear_line(code, screen, "did not answer like an HTTP server")


def test_login_never_follows_a_redirect_with_the_key(tmp_path: Path) -> None:
    with key_endpoint() as (elsewhere, seen_elsewhere):
        location = f"{elsewhere}/v1/models?limit=1"
        answer = f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\n"
        answer += "Content-Length: 0\r\nConnection: close\r\n\r\n"
        with raw_endpoint(answer.encode()) as (url, _received):
            code, screen = _login(tmp_path / "home", url, GOOD_KEY)
        assert seen_elsewhere == []  # the key never reached the other origin
    _one_clear_line(code, screen, f"HTTP 307, a redirect to {location}")


def test_login_input_with_a_control_character_is_refused(tmp_path: Path) -> None:
    with key_endpoint() as (url, seen):
        code, screen = _login(tmp_path / "home", url, f"sk-a{CANARY_BODY}\tmore")
    _one_clear_line(code, screen, "contains a tab at position")
    assert seen == []  # not even checked: it could never work as a header
    assert not credentials_path(tmp_path / "home").exists()


def test_login_check_has_an_overall_deadline(tmp_path: Path) -> None:
    # One byte a second never trips a per-read timeout; the overall deadline ends it.
    answer = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"y" * 200 + b"\r\n\r\n{}"
    with raw_endpoint(answer, trickle=True) as (url, _received):
        code, screen = _login(tmp_path / "home", url, GOOD_KEY, IAC_CODE_LOGIN_DEADLINE_SECONDS="3")
    _one_clear_line(code, screen, "did not finish answering the key check within 3 s")


def test_logout_when_the_credentials_file_is_a_directory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    credentials_path(home).mkdir(parents=True)
    env = agent_environment(home, None, api_key=None)
    done = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "logout"],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 1
    assert "Could not remove" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_valid_key_never_appears_in_frames_or_debug_logs(tmp_path: Path) -> None:
    # The key reaches the endpoint (a rejection, then a working turn) with DEBUG logging on:
    # neither the SDK's nor the agent's log lines, nor any frame, hold it.
    home = tmp_path / "home"
    script = [error_turn(401, "invalid x-api-key"), Turn().text("fine").to_dict()]
    with ScriptedLLMServer(script) as llm:
        errors, written = _prompt_errors(home, llm.url, CANARY)
        assert {r.api_key for r in llm.model_requests} == {CANARY}
    assert errors[1]["code"] == -32000  # v1: the endpoint's rejection
    assert errors[2] is None  # v2: the prompt was accepted
    assert CANARY_BODY[:4] not in written
