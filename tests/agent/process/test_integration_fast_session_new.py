"""``session/new`` right after ``initialize`` is answered by the start-up fast path while the
runtime still imports, and the session it names is a real one once the runtime takes over."""

from __future__ import annotations

import json
from pathlib import Path

from acp_scripted_llm import ScriptedLLMServer
from iac_code.prelude import plain_session_new, session_new_result
from iac_code.settings import Settings

from tests.agent.process.stdio_harness import spawn

INIT = {"protocolVersion": 1, "clientCapabilities": {}}


def _together(agent: object, workspace: Path, **extra: object) -> tuple[int, int]:
    """initialize and session/new written in one go, as an eager editor does."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
    params = {"cwd": str(workspace), "mcpServers": [], **extra}
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": params}
    data = (json.dumps(init) + "\n" + json.dumps(new) + "\n").encode()
    agent.send_raw(data)  # type: ignore[attr-defined]
    return 1, 2


def test_an_early_session_new_is_a_full_session(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        _together(agent, workspace)
        early = agent.reply(2)
        session_id = early.result["sessionId"]
        # Its commands follow the answer, as for any session/new.
        commands = agent.wait_update("available_commands_update", start=early.index)
        assert agent.frames[commands]["params"]["sessionId"] == session_id
        later = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []})
        # Same answer as the runtime's own handler gives, apart from the id.
        assert {**early.result, "sessionId": "x"} == {**later.result, "sessionId": "x"}
        assert session_id != later.result["sessionId"]
        # It works like any other session: prompts, listing, persistence.
        turn = agent.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]},
        )
        assert turn.result["stopReason"] == "end_turn"
        listed = agent.call("session/list", {}).result["sessions"]
        assert session_id in [s["sessionId"] for s in listed]
        assert agent.all_stdout_is_json()
    with spawn(home, llm_server.url) as agent:  # and it is on disk for the next process
        agent.initialize()
        assert agent.load(session_id, workspace).result is not None


def test_an_early_session_new_the_fast_path_cannot_judge_gets_the_runtime_s_answer(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
        bad = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "rel"}}
        agent.send_raw((json.dumps(init) + "\n" + json.dumps(bad) + "\n").encode())
        assert agent.reply(1).result["protocolVersion"] == 1
        assert agent.reply(2).error["code"] == -32602
        assert agent.new_session(workspace)  # still up and serving


def test_only_plain_requests_take_the_fast_path(tmp_path: Path) -> None:
    cwd = str(tmp_path)

    def new(**params: object) -> dict[str, object]:
        return {"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": params}

    assert plain_session_new(new(cwd=cwd, mcpServers=[])) == (7, cwd)
    assert plain_session_new(new(cwd=cwd + "/./", mcpServers=[], _meta={})) == (7, cwd)
    assert plain_session_new(new(cwd=cwd)) == (7, cwd)  # mcpServers left out: lenient
    for params in (
        {"cwd": "relative", "mcpServers": []},
        {"cwd": str(tmp_path / "missing"), "mcpServers": []},
        {"cwd": cwd, "mcpServers": [{"name": "x", "command": "y", "args": [], "env": []}]},
        {"cwd": cwd, "mcpServers": [], "additionalDirectories": [cwd]},
        {"cwd": 3, "mcpServers": []},
    ):
        assert plain_session_new(new(**params)) is None
    assert plain_session_new({"jsonrpc": "2.0", "id": True, "method": "session/new"}) is None
    assert plain_session_new({"jsonrpc": "2.0", "method": "session/new", "params": {}}) is None


def test_the_fast_answer_is_valid_for_the_schema(tmp_path: Path) -> None:
    from acp_schema.validation import validate_result

    result = session_new_result("abc", Settings(home=tmp_path))
    assert validate_result("session/new", result) == []
