"""``acp-conformance proxy`` as a real subprocess between a scripted editor and an agent:
bytes pass unchanged both ways, findings are reported live, the agent's exit code and
signals pass through."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.checker.proxy.proxy_support import (
    ProxyProcess,
    prompt,
    raw_agent,
    start_session,
    teed,
)

pytestmark = pytest.mark.subprocess


def _iac_code_env(home: Path, llm_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "IAC_CODE_"))}
    env.update(IAC_CODE_HOME=str(home), ANTHROPIC_BASE_URL=llm_url, ANTHROPIC_API_KEY="test-key")
    return env


def test_our_agent_runs_a_turn_through_the_proxy_unchanged_and_clean(tmp_path: Path) -> None:
    agent = [sys.executable, "-m", "iac_code.cli", "acp"]
    html = tmp_path / "report.html"
    with (
        ScriptedLLMServer() as llm,
        ProxyProcess(
            teed(agent, tmp_path),
            tmp_path,
            "--html",
            str(html),
            env=_iac_code_env(tmp_path / "home", llm.url),
        ) as proxy,
    ):
        session_id = start_session(proxy, tmp_path)
        answer = prompt(proxy, session_id, "hello through the proxy")
        proxy.close_stdin()
        code = proxy.wait()
        proxy.wait_for_eof()
    assert answer["result"]["stopReason"] == "end_turn"
    assert code == 0
    assert bytes(proxy.sent) == (tmp_path / "in.bin").read_bytes()
    assert bytes(proxy.received) == (tmp_path / "out.bin").read_bytes()
    report = proxy.report()
    assert report["findings"] == [], report["findings"]
    assert report["agent"]["exitCode"] == 0
    assert report["frames"]["a2c"] >= 4
    assert "<!DOCTYPE html>" in html.read_text(encoding="utf-8")


def test_an_update_after_the_prompt_result_is_reported_live_and_still_forwarded(
    tmp_path: Path,
) -> None:
    agent = teed(raw_agent("--defect", "update-after-response"), tmp_path)
    with ProxyProcess(agent, tmp_path) as proxy:
        session_id = start_session(proxy, tmp_path)
        answer = prompt(proxy, session_id, "hi")
        late = proxy.wait_for(lambda m: m.get("method") == "session/update")
        # Reported while the session goes on, not only in the report at the end.
        live = proxy.wait_for_stderr("prompt.updates-before-response")
        proxy.close_stdin()
        code = proxy.wait()
        proxy.wait_for_eof()
    assert answer["result"] == {"stopReason": "end_turn"}
    assert late["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    assert f"session {session_id!r} after its prompt's result" in live
    assert code == 0
    assert bytes(proxy.received) == (tmp_path / "out.bin").read_bytes()
    assert bytes(proxy.sent) == (tmp_path / "in.bin").read_bytes()
    [finding] = proxy.report()["findings"]
    assert finding["rule"] == "prompt.updates-before-response"
    assert finding["side"] == "agent"
    assert "agent_message_chunk" in finding["line"]
    assert any(f["seq"] == finding["seq"] for f in finding["context"])


@pytest.mark.parametrize(
    ("defect", "rule"),
    [
        ("update-before-session-id", "prompt.updates-after-session-handed-out"),
        ("stdout-noise", "transport.stdout-only-json"),
        ("wrong-id", "jsonrpc.id-echo"),
    ],
)
def test_seeded_agent_defects_are_named_by_their_requirement(
    tmp_path: Path, defect: str, rule: str
) -> None:
    with ProxyProcess(teed(raw_agent("--defect", defect), tmp_path), tmp_path) as proxy:
        proxy.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": 1, "clientCapabilities": {}}})  # fmt: skip
        proxy.wait_for(lambda m: m.get("id") in (1, "1"))
        proxy.send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {
            "cwd": str(tmp_path), "mcpServers": []}})  # fmt: skip
        proxy.wait_for(lambda m: m.get("id") in (2, "2"))
        proxy.close_stdin()
        assert proxy.wait() == 0
        proxy.wait_for_eof()
    rules = {f["rule"] for f in proxy.report()["findings"]}
    assert rule in rules
    assert bytes(proxy.received) == (tmp_path / "out.bin").read_bytes()


def test_bytes_are_not_reencoded_in_either_direction(tmp_path: Path) -> None:
    odd = (
        b'{ "jsonrpc" : "2.0", "id": 1, "method": "initialize",\t"params": {"protocolVersion": 1,'
        b' "clientCapabilities": {}, "_meta": {"note": "caf\\u00e9 \xc3\xa9"}}}\r\n'
    )
    with ProxyProcess(teed(raw_agent(), tmp_path), tmp_path) as proxy:
        proxy.write(odd)
        proxy.write(b"\n\n")  # blank lines are relayed too
        proxy.wait_for(lambda m: m.get("id") == 1)
        proxy.close_stdin()
        assert proxy.wait() == 0
        proxy.wait_for_eof()
    assert (tmp_path / "in.bin").read_bytes() == odd + b"\n\n"
    assert bytes(proxy.received) == (tmp_path / "out.bin").read_bytes()


# -- pipes closing, exit codes, signals ------------------------------------------------------


def test_an_editor_that_closes_stdin_at_once_ends_the_agent_and_the_proxy(tmp_path: Path) -> None:
    with ProxyProcess(raw_agent(), tmp_path) as proxy:
        proxy.close_stdin()
        assert proxy.wait() == 0
        proxy.wait_for_eof()
    assert proxy.report()["findings"] == []
    assert not any("Traceback" in line for line in proxy.stderr_lines)


def test_an_editor_that_stops_reading_does_not_stall_the_agent(tmp_path: Path) -> None:
    with ProxyProcess(teed(raw_agent(), tmp_path), tmp_path, stop_reading_after=1) as proxy:
        proxy.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        proxy.wait_for_eof()  # the editor's end of the pipe is closed now
        for n in range(200):  # answered into a closed pipe: drained and still judged
            proxy.send({"jsonrpc": "2.0", "id": 1000 + n, "method": "_x/ping", "params": {}})
        proxy.close_stdin()
        assert proxy.wait() == 0
    report = proxy.report()
    assert report["frames"]["a2c"] == 201
    assert "proxy stdout" in report["closedPipes"]
    assert not any("Traceback" in line for line in proxy.stderr_lines)


def test_an_agent_that_closes_its_stdin_early_does_not_break_the_proxy(tmp_path: Path) -> None:
    agent = [sys.executable, "-c", (
        "import os, sys\n"
        "os.close(0)\n"
        "print('{\"jsonrpc\":\"2.0\",\"method\":\"_x/closed\"}', flush=True)\n"
        "sys.exit(5)\n"
    )]  # fmt: skip
    with ProxyProcess(agent, tmp_path) as proxy:
        proxy.wait_for(lambda m: m.get("method") == "_x/closed")
        for n in range(50):  # the agent no longer reads: these go nowhere, silently
            try:
                proxy.send({"jsonrpc": "2.0", "id": n, "method": "_x/ping", "params": {}})
            except BrokenPipeError:
                break  # the proxy may exit first: what matters is how it exits
        assert proxy.wait() == 5
    assert not any("Traceback" in line for line in proxy.stderr_lines)


def test_an_agent_that_closes_stdout_gives_the_editor_eof_and_its_exit_code(
    tmp_path: Path,
) -> None:
    agent = [sys.executable, "-c", "import os, sys\nos.close(1)\nsys.stdin.read()\nsys.exit(4)\n"]
    with ProxyProcess(agent, tmp_path) as proxy:
        proxy.wait_for_eof()  # while the agent still runs
        assert proxy.proc.poll() is None
        proxy.close_stdin()
        assert proxy.wait() == 4


def test_the_agents_exit_code_is_the_proxys(tmp_path: Path) -> None:
    agent = [sys.executable, "-c", "import sys\nsys.stdin.read()\nsys.exit(7)\n"]
    with ProxyProcess(agent, tmp_path) as proxy:
        proxy.close_stdin()
        assert proxy.wait() == 7


_SIGNAL_AGENT = """
import os, signal, sys
def bye(signum, frame):
    os.write(1, b'{"jsonrpc":"2.0","method":"_x/bye","params":{"signal":%d}}\\n' % signum)
    sys.exit(42)
signal.signal(signal.SIGTERM, bye)
signal.signal(signal.SIGINT, bye)
print('{"jsonrpc":"2.0","method":"_x/ready"}', flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signals_are_forwarded_to_the_agent(tmp_path: Path, signum: int) -> None:
    with ProxyProcess([sys.executable, "-c", _SIGNAL_AGENT], tmp_path) as proxy:
        proxy.wait_for(lambda m: m.get("method") == "_x/ready")
        proxy.signal(signum)
        bye = proxy.wait_for(lambda m: m.get("method") == "_x/bye")
        assert proxy.wait() == 42
    assert bye["params"]["signal"] == signum


def test_an_agent_killed_by_a_signal_exits_the_proxy_with_128_plus_n(tmp_path: Path) -> None:
    agent = [sys.executable, "-c", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"]
    with ProxyProcess(agent, tmp_path) as proxy:
        assert proxy.wait() == 128 + signal.SIGKILL


def test_an_agent_that_cannot_start_is_reported_without_a_traceback(tmp_path: Path) -> None:
    with ProxyProcess([str(tmp_path / "no-such-agent")], tmp_path) as proxy:
        code = proxy.wait()
    assert code == 127
    text = "".join(proxy.stderr_lines)
    assert "cannot start" in text
    assert "Traceback" not in text
