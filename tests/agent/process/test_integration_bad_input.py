"""Bad input through the real stdio server (SPEC §1.1, §12).

One agent process serves the whole module: after every bad line the next ``session/new`` must
still work, which is exactly what sharing the process checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_scripted_llm import ScriptedLLMServer

from tests.agent.process.stdio_harness import BlockingAgent, spawn

pytestmark = pytest.mark.subprocess

MAX_LINE = 100_000


@pytest.fixture(scope="module")
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bad-input")
    (root / "ws").mkdir()
    return root


@pytest.fixture(scope="module")
def agent(shared_workspace: Path, llm_server: ScriptedLLMServer) -> Iterator[BlockingAgent]:
    with spawn(
        shared_workspace / "home", llm_server.url, "--max-line-bytes", str(MAX_LINE)
    ) as process:
        assert process.initialize()["protocolVersion"] == 1
        yield process
        assert process.all_stdout_is_json(), "stdout carried something that is not a frame"


def answer_to_line(agent: BlockingAgent, line: bytes) -> dict:
    """Send one raw line; return the next frame (bad lines are answered in order)."""
    start = len(agent.frames)
    agent.send_raw(line)
    index = agent.wait_frame(lambda f: "id" in f and "method" not in f, start=start)
    return agent.frames[index]


def answered_nothing_since(agent: BlockingAgent, start: int, end: int) -> bool:
    """Only notifications (e.g. a late available_commands_update) arrived in between."""
    return all("method" in frame for frame in agent.frames[start:end])


def still_serves(agent: BlockingAgent, shared_workspace: Path) -> None:
    reply = agent.call("session/new", {"cwd": str(shared_workspace / "ws"), "mcpServers": []})
    assert isinstance(reply.result["sessionId"], str)


def test_invalid_json_is_a_parse_error_with_a_null_id(
    agent: BlockingAgent, shared_workspace: Path
) -> None:
    frame = answer_to_line(agent, b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert frame["id"] is None
    assert frame["error"]["code"] == -32700
    still_serves(agent, shared_workspace)


def test_invalid_utf8_is_a_parse_error(agent: BlockingAgent, shared_workspace: Path) -> None:
    frame = answer_to_line(agent, b'{"jsonrpc":"2.0","id":1,"method":"session/list","x":"\xff"}')
    assert frame["id"] is None
    assert frame["error"]["code"] == -32700
    still_serves(agent, shared_workspace)


@pytest.mark.parametrize(
    ("line", "echoed_id"),
    [
        (b"42", None),
        (b'"a string"', None),
        (b"null", None),
        (b"[]", None),
        (b'[{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}]', None),
        (b'{"jsonrpc":"1.0","id":8,"method":"session/list","params":{}}', 8),
        (b'{"id":9,"method":"session/list","params":{}}', 9),
        (b'{"jsonrpc":"2.0","id":true,"method":"session/list"}', None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"session/list"}', None),
        (b'{"jsonrpc":"2.0","id":{"n":1},"method":"session/list"}', None),
        (b'{"jsonrpc":"2.0","id":"ten"}', "ten"),
    ],
)
def test_valid_json_that_is_not_a_request_is_an_invalid_request(
    agent: BlockingAgent, shared_workspace: Path, line: bytes, echoed_id: object
) -> None:
    frame = answer_to_line(agent, line)
    assert frame["error"]["code"] == -32600
    assert frame["id"] == echoed_id
    still_serves(agent, shared_workspace)


def test_an_unknown_method_is_method_not_found_naming_it(
    agent: BlockingAgent, shared_workspace: Path
) -> None:
    reply = agent.call("session/teleport", {})
    assert reply.error["code"] == -32601
    assert reply.error["data"] == {"method": "session/teleport"}
    still_serves(agent, shared_workspace)


def test_an_unknown_extension_request_is_method_not_found(agent: BlockingAgent) -> None:
    reply = agent.call("_vendor/feature", {"x": 1})
    assert reply.error["code"] == -32601
    assert reply.error["data"] == {"method": "_vendor/feature"}


def test_an_unknown_extension_notification_is_ignored(
    agent: BlockingAgent, shared_workspace: Path
) -> None:
    start = len(agent.frames)
    agent.notify("_vendor/ping", {"x": 1})
    reply = agent.call("session/list", {})
    assert answered_nothing_since(agent, start, reply.index)  # the notification got no answer
    still_serves(agent, shared_workspace)


@pytest.mark.parametrize(
    ("method", "params", "fields"),
    [
        ("session/new", {"cwd": 5, "mcpServers": "none"}, {"cwd", "mcpServers"}),
        ("session/new", [1, 2], {"params"}),
        ("session/prompt", {"sessionId": 1}, {"sessionId", "prompt"}),
        ("session/list", {"cursor": 3}, {"cursor"}),
        ("initialize", {"protocolVersion": "1"}, {"protocolVersion"}),
        ("session/set_mode", {"sessionId": "x"}, {"modeId"}),
    ],
)
def test_wrong_param_types_name_the_fields_without_python_text(
    agent: BlockingAgent, shared_workspace: Path, method: str, params: object, fields: set[str]
) -> None:
    reply = agent.call(method, params)
    assert reply.error["code"] == -32602
    assert set(reply.error["data"]) == fields
    text = json.dumps(reply.error).lower()
    for leak in ("pydantic", "traceback", "validation error", "input_value", "errors.pydantic"):
        assert leak not in text
    still_serves(agent, shared_workspace)


def test_an_over_limit_line_is_rejected_and_the_connection_stays_usable(
    agent: BlockingAgent, shared_workspace: Path
) -> None:
    huge = json.dumps(
        {"jsonrpc": "2.0", "id": 77, "method": "session/list", "params": {"x": "a" * 200_000}}
    ).encode()
    frame = answer_to_line(agent, huge)
    assert frame["id"] is None
    assert frame["error"]["code"] == -32600
    still_serves(agent, shared_workspace)
    assert not any(f.get("id") == 77 for f in agent.frames)  # the line was discarded


def test_a_response_to_an_unknown_request_id_is_ignored(
    agent: BlockingAgent, shared_workspace: Path
) -> None:
    start = len(agent.frames)
    agent.send({"jsonrpc": "2.0", "id": 4242, "result": {"outcome": {"outcome": "cancelled"}}})
    reply = agent.call("session/list", {})
    assert answered_nothing_since(agent, start, reply.index)
    still_serves(agent, shared_workspace)


def test_unknown_session_ids_and_relative_paths_are_invalid_params(
    agent: BlockingAgent, shared_workspace: Path
) -> None:
    unknown = agent.call(
        "session/load",
        {"sessionId": "../../etc/passwd", "cwd": str(shared_workspace / "ws"), "mcpServers": []},
    )
    assert unknown.error["code"] == -32602
    assert unknown.error["data"] == {"sessionId": "unknown session"}
    relative = agent.call("session/list", {"cwd": "ws"})
    assert relative.error["code"] == -32602
    assert set(relative.error["data"]) == {"cwd"}
