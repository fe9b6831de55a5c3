"""Protocol v2 beside v1, over a real ``iac-code acp`` subprocess and the real anthropic SDK.

A client asking for 2 (or anything newer) gets 2 and works in v2 shapes end to end; a client
asking for 1 or 0 gets the untouched v1 protocol. Every frame the agent sends on a v2
connection is checked against ``schema/v2`` with ``acp_schema.validation``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_schema.validation import validate_message
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.stdio_harness import BlockingAgent, spawn
from tests.agent.protocol_v2.v2_script import (
    ASK,
    ASK_CHOICES,
    BASH,
    FINAL_TEXT,
    SLOW,
    WRITE,
    WRITTEN_TEXT,
)
from tests.agent.turn_tools.agent_tools_kit import install_stand_in_terraform

pytestmark = pytest.mark.subprocess

#: Bound on waits that include the first model call: it imports the anthropic SDK, which
#: takes over 10 s on a loaded shared machine. Still a bound, never a sleep.
MODEL_WAIT = 60.0

INFO_V1 = {"name": "v1-client", "version": "0.1"}
V2_INIT = {"protocolVersion": 2, "info": {"name": "v2-test-client", "version": "0.1"}}


def _sent_by_agent_problems(agent: BlockingAgent, version: int) -> list[str]:
    """Schema problems of every frame the agent wrote, each checked as its own method."""
    requests = {f["id"]: f["method"] for f in agent.frames if "method" in f and "id" in f}
    sent_methods: dict[Any, str] = {}
    problems: list[str] = []
    for frame in agent.frames:
        if "method" in frame:
            if "id" in frame:
                sent_methods[frame["id"]] = frame["method"]
            errors = validate_message(frame, version=version)
        else:
            # Our own requests' answers: the harness numbers them, so look the method up.
            method = requests.get(frame.get("id"))
            errors = validate_message(frame, method=method, version=version)
        problems += [f"{frame}: {e}" for e in errors]
    return problems


def _initialize(agent: BlockingAgent, params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = agent.call("initialize", params).result
    return result


@pytest.mark.parametrize(
    ("asked", "answered"),
    [(2, 2), (3, 2), (65535, 2), (1, 1), (0, 1)],
    ids=["2 gets 2", "3 gets the newest: 2", "65535 gets 2", "1 gets 1", "0 gets 1"],
)
def test_initialize_negotiates_the_version(
    llm_server: ScriptedLLMServer, home: Path, asked: int, answered: int
) -> None:
    params: dict[str, Any] = (
        {**V2_INIT, "protocolVersion": asked}
        if asked >= 2
        else {"protocolVersion": asked, "clientCapabilities": {}}
    )
    with spawn(home, llm_server.url) as agent:
        result = _initialize(agent, params)
        assert result["protocolVersion"] == answered
        if answered == 2:
            assert result["info"]["name"] == "iac-code"
            assert "agentCapabilities" not in result
            assert result["capabilities"]["session"]["prompt"]["embeddedContext"] == {}
        else:
            assert result["agentCapabilities"]["loadSession"] is True
        assert _sent_by_agent_problems(agent, answered) == []


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast path", "full runtime"])
def test_a_newer_client_in_v1_shapes_gets_v1(
    llm_server: ScriptedLLMServer, home: Path, fast_path: bool
) -> None:
    params = {"protocolVersion": 65535, "clientCapabilities": {}, "clientInfo": INFO_V1}
    with spawn(home, llm_server.url) as agent:
        if not fast_path:
            agent.call("session/list", {})  # the first line is not initialize: no fast path
        result = _initialize(agent, params)
        assert result["protocolVersion"] == 1
        assert result["agentCapabilities"]["loadSession"] is True
        assert _sent_by_agent_problems(agent, 1) == []


def test_the_fast_path_and_the_full_runtime_answer_v2_alike(
    llm_server: ScriptedLLMServer, home: Path
) -> None:
    """The first initialize is answered by the start-up fast path, a second by the runtime."""
    with spawn(home, llm_server.url) as agent:
        first = _initialize(agent, V2_INIT)
        again = _initialize(agent, V2_INIT)
    assert first == again


def test_a_v2_client_creates_a_session_and_prompts_in_v2_shapes(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        _initialize(agent, V2_INIT)
        new = agent.call("session/new", {"cwd": str(workspace)}).result
        session_id = new["sessionId"]
        assert "modes" not in new
        assert {o["configId"] for o in new["configOptions"]} == {"model", "thought_level"}
        assert all(c["type"] == "command" for c in new["availableCommands"])

        prompt = agent.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": WRITE + " main.tf"}]},
        )
        message_id = prompt.result["messageId"]
        assert set(prompt.result) == {"messageId"}

        # The turn goes on after the answer: the write asks for permission in v2 shape.
        asked = agent.wait_frame(
            lambda f: f.get("method") == "session/request_permission", timeout=MODEL_WAIT
        )
        permission = agent.frames[asked]
        subject = permission["params"]["subject"]
        assert subject["type"] == "tool_call"
        assert permission["params"]["title"]
        option = next(o for o in permission["params"]["options"] if o["kind"] == "allow_once")
        agent.send(
            {
                "jsonrpc": "2.0",
                "id": permission["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": option["optionId"]}},
            }
        )
        idle = agent.wait_frame(_is_idle, timeout=MODEL_WAIT)
        updates = [
            f["params"]["update"]
            for f in agent.frames[: idle + 1]
            if f.get("method") == "session/update"
        ]
        problems = _sent_by_agent_problems(agent, 2)

    assert problems == []
    kinds = [u["sessionUpdate"] for u in updates]
    assert "tool_call" not in kinds and "plan" not in kinds
    states = [u["state"] for u in updates if u["sessionUpdate"] == "state_update"]
    # The permission request blocks the turn on the user: requires_action while it waits.
    assert states == ["running", "requires_action", "running", "idle"]
    blocked = next(
        i
        for i, f in enumerate(agent.frames)
        if f.get("method") == "session/update"
        and f["params"]["update"].get("state") == "requires_action"
    )
    assert blocked < asked
    assert updates[-1]["stopReason"] == "end_turn"
    diffs = [
        c
        for u in updates
        if u["sessionUpdate"] == "tool_call_update"
        for c in u.get("content") or []
        if c["type"] == "diff"
    ]
    assert diffs and diffs[-1]["changes"][0]["path"] == str(workspace / "main.tf")
    assert diffs[-1]["patch"]["format"] == "git_patch"
    text = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == FINAL_TEXT
    assert all(u.get("messageId") for u in updates if u["sessionUpdate"].endswith("_chunk"))
    assert (workspace / "main.tf").read_text(encoding="utf-8") == WRITTEN_TEXT
    assert message_id.startswith("msg_")


def test_v2_resume_replays_history_in_v2_shapes(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        _initialize(agent, V2_INIT)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        prompt = agent.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]},
        )
        message_id = prompt.result["messageId"]
        agent.wait_frame(_is_idle, timeout=MODEL_WAIT)
    with spawn(home, llm_server.url) as agent:
        _initialize(agent, V2_INIT)
        resumed = agent.call(
            "session/resume",
            {"sessionId": session_id, "cwd": str(workspace), "replayFrom": {"type": "start"}},
        )
        problems = _sent_by_agent_problems(agent, 2)
    assert problems == []
    assert "modes" not in resumed.result
    replayed = [u["update"] for u in resumed.updates]
    users = [u for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert users and users[0]["messageId"] == message_id
    assert any(u["sessionUpdate"] == "agent_message_chunk" for u in replayed)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("session/load", {"sessionId": "s", "cwd": "/", "mcpServers": []}),
        ("session/set_mode", {"sessionId": "s", "modeId": "default"}),
        ("authenticate", {"methodId": "anthropic-api-key"}),
    ],
)
def test_methods_outside_v2_or_not_offered_answer_method_not_found(
    llm_server: ScriptedLLMServer, home: Path, method: str, params: dict[str, Any]
) -> None:
    with spawn(home, llm_server.url) as agent:
        _initialize(agent, V2_INIT)
        error = agent.call(method, params).error
        assert error["code"] == -32601
        assert agent.returncode is None


def test_v2_bad_input_gets_clear_errors_and_the_process_stays_up(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        _initialize(agent, V2_INIT)
        unknown = agent.call(
            "session/prompt",
            {"sessionId": "sess_nope", "prompt": [{"type": "text", "text": "hi"}]},
        ).error
        assert unknown["code"] == -32002
        assert unknown["data"] == {"sessionId": "sess_nope"}
        v1_shape = agent.call(
            "session/new", {"cwd": str(workspace), "mcpServers": [{"name": "x", "command": "/x"}]}
        ).error
        assert v1_shape["code"] == -32602
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        empty = agent.call("session/prompt", {"sessionId": session_id, "prompt": []}).error
        assert empty["code"] == -32602
        boolean = agent.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "type": "boolean", "value": True},
        ).error
        assert boolean["code"] == -32602
        assert agent.call("session/list", {}).result["sessions"]
        assert _sent_by_agent_problems(agent, 2) == []


def _states(frames: list[dict[str, Any]]) -> list[str]:
    """The states the ``state_update`` notifications among ``frames`` announce, in order."""
    return [
        f["params"]["update"]["state"]
        for f in frames
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "state_update"
    ]


def _is_idle(frame: dict[str, Any]) -> bool:
    return (
        frame.get("method") == "session/update"
        and frame["params"]["update"].get("sessionUpdate") == "state_update"
        and frame["params"]["update"].get("state") == "idle"
    )


def test_v2_cancel_ends_the_turn_with_a_cancelled_stop_reason(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    with spawn(home, llm_server.url) as agent:
        _initialize(agent, V2_INIT)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": SLOW + " go"}]}
        answered = agent.call("session/prompt", prompt)
        assert "messageId" in answered.result
        agent.wait_update("agent_message_chunk", start=answered.index, timeout=MODEL_WAIT)
        # A second prompt while the turn runs is refused; the running turn is not disturbed.
        assert agent.call("session/prompt", prompt).error["code"] == -32602
        agent.notify("session/cancel", {"sessionId": session_id})
        idle = agent.wait_frame(_is_idle, start=answered.index, timeout=MODEL_WAIT)
        stop = agent.frames[idle]["params"]["update"]["stopReason"]
        idles = [f for f in agent.frames if _is_idle(f)]
        # The session takes a new prompt afterwards.
        again = agent.call(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        )
        problems = _sent_by_agent_problems(agent, 2)
    assert stop == "cancelled"
    assert len(idles) == 1
    assert "messageId" in again.result
    assert problems == []


def _v2_prompt(
    agent: BlockingAgent, init: dict[str, Any], workspace: Path, text: str
) -> tuple[str, Any]:
    """Initialize with ``init``, open a session, prompt ``text``: (session id, the answer)."""
    _initialize(agent, init)
    session_id: str = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
    prompt = [{"type": "text", "text": text}]
    return session_id, agent.call("session/prompt", {"sessionId": session_id, "prompt": prompt})


def test_a_v2_turn_cancelled_while_asking_goes_from_requires_action_to_idle(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    """Blocked on the user, then cancelled: the work ends without resuming, so no running."""
    with spawn(home, llm_server.url) as agent:
        session_id, answered = _v2_prompt(agent, V2_INIT, workspace, WRITE + " main.tf")
        asked = agent.wait_frame(
            lambda f: f.get("method") == "session/request_permission",
            start=answered.index,
            timeout=MODEL_WAIT,
        )
        agent.notify("session/cancel", {"sessionId": session_id})
        cancelled = {"outcome": {"outcome": "cancelled"}}
        agent.send({"jsonrpc": "2.0", "id": agent.frames[asked]["id"], "result": cancelled})
        idle = agent.wait_frame(_is_idle, start=answered.index, timeout=MODEL_WAIT)
        states = _states(agent.frames[answered.index : idle + 1])
        stop = agent.frames[idle]["params"]["update"]["stopReason"]
    assert states == ["running", "requires_action", "idle"]
    assert stop == "cancelled"


@pytest.mark.parametrize("form", [True, False], ids=["form advertised", "not advertised"])
def test_a_v2_client_with_form_elicitation_is_asked_in_v2_shapes(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path, form: bool
) -> None:
    """``ask_user`` is offered to a v2 client that advertised form elicitation: its
    elicitation/create is valid v2, framed by requires_action; without the capability the
    tool is not offered and nothing is asked."""
    init = {**V2_INIT, "capabilities": {"elicitation": {"form": {}}} if form else {}}
    with spawn(home, llm_server.url) as agent:
        session_id, answered = _v2_prompt(agent, init, workspace, ASK + " pick a region")
        if form:
            asked = agent.wait_frame(
                lambda f: f.get("method") == "elicitation/create",
                start=answered.index,
                timeout=MODEL_WAIT,
            )
            request = agent.frames[asked]
            content = {"answer": ASK_CHOICES[0]}
            agent.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"action": "accept", "content": content},
                }
            )
        idle = agent.wait_frame(_is_idle, start=answered.index, timeout=MODEL_WAIT)
        frames = agent.frames[answered.index : idle + 1]
        problems = _sent_by_agent_problems(agent, 2)
    states = _states(frames)
    assert problems == []
    assert frames[-1]["params"]["update"]["stopReason"] == "end_turn"
    if not form:
        assert not any(f.get("method") == "elicitation/create" for f in frames)
        return
    assert request["params"]["mode"] == "form" and request["params"]["sessionId"] == session_id
    choices = request["params"]["requestedSchema"]["properties"]["answer"]["oneOf"]
    assert [c["const"] for c in choices] == ASK_CHOICES
    assert states == ["running", "requires_action", "running", "idle"]


def _answer_permission(agent: BlockingAgent, start: int, kind: str) -> dict[str, Any]:
    """Wait for the next permission request from ``start``, answer the option of ``kind``."""
    asked = agent.wait_frame(
        lambda f: f.get("method") == "session/request_permission", start=start, timeout=MODEL_WAIT
    )
    params: dict[str, Any] = agent.frames[asked]["params"]
    option = next(o for o in params["options"] if o["kind"] == kind)
    agent.send(
        {
            "jsonrpc": "2.0",
            "id": agent.frames[asked]["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": option["optionId"]}},
        }
    )
    return params


def test_v2_allow_always_on_bash_then_terraform_destroy_still_asks(
    llm_server: ScriptedLLMServer, home: Path, workspace: Path
) -> None:
    """SPEC §6: an infrastructure-changing command asks even after "allow always" (v2)."""
    record = install_stand_in_terraform(workspace)
    destroy = 'PATH="$PWD/bin:$PATH" terraform destroy -auto-approve'
    with spawn(home, llm_server.url) as agent:
        _initialize(agent, V2_INIT)
        session_id = agent.call("session/new", {"cwd": str(workspace)}).result["sessionId"]
        start = len(agent.frames)
        agent.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": BASH + "echo ok"}]},
        )
        _answer_permission(agent, start, "allow_always")
        start = agent.wait_frame(_is_idle, start=start, timeout=MODEL_WAIT) + 1
        agent.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": BASH + destroy}]},
        )
        asked = _answer_permission(agent, start, "reject_once")
        agent.wait_frame(_is_idle, start=start, timeout=MODEL_WAIT)
        # Only the agent's own requests and notifications: its two permission requests'
        # ids collide with the harness's numbering of replies.
        problems = [
            error
            for frame in agent.frames
            if "method" in frame
            for error in validate_message(frame, version=2)
        ]
    assert problems == []
    assert asked["title"] == f"Changes real infrastructure: {destroy}"
    assert [o["kind"] for o in asked["options"]] == ["allow_once", "reject_once"]
    assert not record.exists()
