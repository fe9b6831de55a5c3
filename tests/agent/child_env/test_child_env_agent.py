"""Through a real ``iac-code acp``: bash and MCP servers never see the agent's credentials."""

from __future__ import annotations

import hashlib
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from acp_scripted_llm import ScriptedLLMServer
from acp_scripted_llm.script import Turn

from tests.agent.process.stdio_harness import BlockingAgent, agent_environment, run_agent

FAKE_MCP = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "fake_mcp_server.py"
pytestmark = pytest.mark.subprocess


def _allow_permissions_until_reply(agent: BlockingAgent, prompt_id: Any) -> dict[str, Any]:
    """Answer every permission request with allow_once; return the prompt's answer frame."""
    position = 0
    while True:
        index = agent.wait_frame(
            lambda f: (
                f.get("method") == "session/request_permission"
                or (f.get("id") == prompt_id and "method" not in f)
            ),
            start=position,
        )
        frame = agent.frames[index]
        if "method" not in frame:
            return frame
        agent.send(
            {
                "jsonrpc": "2.0",
                "id": frame["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
            }
        )
        position = index + 1


def _run_env_through_bash(
    tmp_path: Path,
    extra_env: dict[str, str],
    *args: str,
    command: str = "env",
    config: str = "",
    seen: dict[str, Any] | None = None,
) -> tuple[str, bytes, bytes, str]:
    """(bash tool output as the client saw it, agent stdout, events.jsonl, model request).

    ``seen`` (when given) gets the agent's ``/proc/PID/environ`` read right after
    ``initialize`` and the credentials the model server received."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    if config:
        home.mkdir()
        (home / "config.toml").write_text(config, encoding="utf-8")
    script = [
        Turn().tool_use("bash", {"command": command}, id="toolu_env").stop("tool_use"),
        Turn().text("done").stop("end_turn"),
    ]
    with ScriptedLLMServer(script) as llm:
        env = agent_environment(home, llm.url)
        env.update(extra_env)
        with run_agent(env, *args, stderr_path=tmp_path / "stderr.txt") as agent:
            agent.initialize()
            if seen is not None:
                seen["environ"] = Path(f"/proc/{agent.pid}/environ").read_bytes()
            session_id = agent.new_session(workspace)
            prompt_id = agent.start_prompt(session_id, "show the environment")
            answer = _allow_permissions_until_reply(agent, prompt_id)
            assert answer["result"]["stopReason"] == "end_turn", answer
            shown = json.dumps(
                [
                    f["params"]["update"]
                    for f in agent.frames
                    if f.get("method") == "session/update"
                    and f["params"]["update"].get("toolCallId") == "toolu_env"
                ]
            )
            stdout = b"".join(agent.raw_lines)
            agent.close_stdin()
            assert agent.wait_exit() == 0
        events = (home / "sessions" / session_id / "events.jsonl").read_bytes()
        model_request = json.dumps(llm.model_requests[1].messages)
        if seen is not None:
            seen["api_keys"] = [request.api_key for request in llm.model_requests]
            seen["headers"] = [request.headers for request in llm.model_requests]
    return shown, stdout, events, model_request


def test_env_in_bash_shows_no_agent_credentials(tmp_path: Path) -> None:
    api_key = f"sk-ant-{uuid.uuid4().hex}"
    own_token = f"tok-{uuid.uuid4().hex}"
    marker = f"visible-{uuid.uuid4().hex}"
    shown, stdout, events, model_request = _run_env_through_bash(
        tmp_path,
        {"ANTHROPIC_API_KEY": api_key, "IAC_CODE_DEPLOY_TOKEN": own_token, "USER_MARK": marker},
    )
    assert marker in shown and marker in model_request  # the command did print the env
    for secret in (api_key, own_token):
        assert secret not in shown
        assert secret.encode() not in stdout
        assert secret.encode() not in events
        assert secret not in model_request
    assert "ANTHROPIC_API_KEY" not in shown


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_the_agents_own_environ_shows_no_credentials_and_the_model_still_gets_the_key(
    tmp_path: Path,
) -> None:
    # /proc/PID/environ is the environment the process was started with, readable by every
    # process of the user: bash reads the agent's as /proc/$PPID/environ.
    api_key = f"sk-ant-{uuid.uuid4().hex}"
    secrets = {
        "ANTHROPIC_API_KEY": api_key,
        "ANTHROPIC_AUTH_TOKEN": f"auth-{uuid.uuid4().hex}",
        "IAC_CODE_DEPLOY_TOKEN": f"tok-{uuid.uuid4().hex}",
        "IACCODE_ACP_HTTP_TOKEN": f"http-{uuid.uuid4().hex}",
        "MY_DEPLOY_PASSWORD": f"pw-{uuid.uuid4().hex}",  # secret by config (secret_env)
        "ANTHROPIC_CUSTOM_HEADERS": f"X-Proxy-Auth: hdr-{uuid.uuid4().hex}",
    }
    marker = f"visible-{uuid.uuid4().hex}"
    seen: dict[str, Any] = {}
    shown, stdout, events, model_request = _run_env_through_bash(
        tmp_path,
        {**secrets, "USER_MARK": marker},
        command="tr '\\0' '\\n' < /proc/$PPID/environ",
        config='secret_env = ["MY_DEPLOY_*"]\n',
        seen=seen,
    )
    assert marker in shown and marker in model_request  # bash did read the agent's environ
    assert marker.encode() in seen["environ"]
    for name, secret in secrets.items():
        assert secret not in shown, name
        assert secret not in model_request, name
        assert secret.encode() not in stdout and secret.encode() not in events, name
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "IACCODE_ACP_HTTP_TOKEN",
        "ANTHROPIC_CUSTOM_HEADERS",
    ):
        # Read straight after initialize: hidden before the first answer.
        assert secrets[name].encode() not in seen["environ"], name
    # The agent still uses the key it was started with, and the SDK still sends the headers.
    assert seen["api_keys"] and all(key == api_key for key in seen["api_keys"])
    proxy_auth = secrets["ANTHROPIC_CUSTOM_HEADERS"].split(": ")[1]
    assert all(headers.get("x-proxy-auth") == proxy_auth for headers in seen["headers"])


def test_the_allow_list_flag_lets_a_named_variable_through(tmp_path: Path) -> None:
    api_key = f"sk-ant-{uuid.uuid4().hex}"
    own_token = f"tok-{uuid.uuid4().hex}"
    # The child prints a digest of what it got: the value itself would be masked on its way
    # back (tool output that looks like a credential never reaches the model or the client).
    shown, _, events, _ = _run_env_through_bash(
        tmp_path,
        {"ANTHROPIC_API_KEY": api_key, "IAC_CODE_DEPLOY_TOKEN": own_token},
        "--child-env-allow",
        "IAC_CODE_DEPLOY_TOKEN",
        command=(
            'printf %s "$IAC_CODE_DEPLOY_TOKEN" | sha256sum;'
            ' printf %s "${ANTHROPIC_API_KEY:-unset}" | sha256sum'
        ),
    )
    digest = hashlib.sha256(own_token.encode()).hexdigest()
    assert digest in shown and digest.encode() in events
    assert hashlib.sha256(b"unset").hexdigest() in shown  # the API key was still withheld
    assert api_key not in shown


def test_an_mcp_server_does_not_inherit_the_api_key(tmp_path: Path) -> None:
    api_key = f"sk-ant-{uuid.uuid4().hex}"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = {"name": "fake", "command": sys.executable, "args": [str(FAKE_MCP)], "env": []}
    script = [
        Turn()
        .tool_use("mcp__fake__whereami", {"var": "ANTHROPIC_API_KEY"}, id="toolu_where")
        .stop("tool_use"),
        Turn().text("done").stop("end_turn"),
    ]
    with ScriptedLLMServer(script) as llm:
        env = agent_environment(tmp_path / "home", llm.url, api_key=api_key)
        with run_agent(env, stderr_path=tmp_path / "stderr.txt") as agent:
            agent.initialize()
            reply = agent.call("session/new", {"cwd": str(workspace), "mcpServers": [server]})
            prompt_id = agent.start_prompt(reply.result["sessionId"], "where is the server?")
            answer = _allow_permissions_until_reply(agent, prompt_id)
            assert answer["result"]["stopReason"] == "end_turn", answer
            agent.close_stdin()
            assert agent.wait_exit() == 0
        results = json.dumps(llm.model_requests[1].messages)
    assert '\\"value\\": null' in results, results  # the server saw no such variable
    assert api_key not in results
