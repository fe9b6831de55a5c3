"""In-memory pieces of v2 beside v1: negotiation, the fast path, v1 → v2 translation, the peer."""

from __future__ import annotations

import contextlib
import os
from typing import Any

import pytest
from acp_schema.validation import validate_message, validate_update
from iac_code import prelude
from iac_code.negotiated_peer import NegotiatedPeer
from iac_code.protocol_versions import HANDLED_VERSIONS, negotiate, negotiate_initialize
from iac_code.v2 import info as v2_info
from iac_code.v2 import translate
from iac_code.v2.rewriter import V2Rewriter

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("requested", "answered"), [(0, 1), (1, 1), (2, 2), (3, 2), (65535, 2)])
def test_negotiation_accepts_what_it_handles_and_offers_the_newest_otherwise(
    requested: int, answered: int
) -> None:
    assert negotiate(requested) == answered


@pytest.mark.parametrize(
    ("params", "answered"),
    [
        ({"protocolVersion": 65535, "clientCapabilities": {}}, 1),
        ({"protocolVersion": 65535, "clientInfo": {"name": "c", "version": "1"}}, 1),
        ({"protocolVersion": 65535, "info": {"name": "c", "version": "1"}}, 2),
        ({"protocolVersion": 3, "info": {"name": "c", "version": "1"}}, 2),
        # Asking for 2 is asking for v2, whatever the shape (a v1 shape then fails validation).
        ({"protocolVersion": 2, "clientCapabilities": {}}, 2),
        ({"protocolVersion": 1, "info": {"name": "c", "version": "1"}}, 1),
    ],
)
def test_a_newer_client_writing_v1_shapes_gets_v1(params: dict[str, Any], answered: int) -> None:
    assert negotiate_initialize(params) == answered


def test_negotiation_without_v2_handlers_stays_at_one() -> None:
    assert negotiate(2, handled=(1,)) == 1
    assert negotiate(3, handled=(1,)) == 1


def test_every_handled_version_has_handlers() -> None:
    from iac_code.versioned_router import VersionedRouter

    assert HANDLED_VERSIONS == (1, 2)
    assert callable(VersionedRouter._build)
    import iac_code.v2.handlers  # noqa: F401  (v2's handlers exist and import)


def test_the_v2_initialize_result_is_valid_v2_and_invalid_v1() -> None:
    result = {"jsonrpc": "2.0", "id": 0, "result": v2_info.initialize_result()}
    assert validate_message(result, method="initialize", version=2) == []
    assert validate_message(result, method="initialize") != []


V2_INIT = {"protocolVersion": 2, "info": {"name": "zed", "version": "1"}, "capabilities": {}}


@pytest.mark.parametrize(
    "params",
    [
        V2_INIT,
        {**V2_INIT, "protocolVersion": 7},
        {**V2_INIT, "capabilities": {"auth": {"terminal": {}}, "elicitation": {"form": {}}}},
        # A v1 field in a v2 request: the v2 schema lets unknown fields through, and so
        # does the runtime (tests/agent/process/test_fast_path_schema_cases.py).
        {**V2_INIT, "clientCapabilities": {}},
    ],
)
def test_the_fast_path_takes_a_plain_v2_initialize(params: dict[str, Any]) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    assert prelude.plain_initialize(message) == (1, params)
    frame = prelude.initialize_response_bytes(1, params)
    assert b'"protocolVersion":2' in frame and b'"info"' in frame


@pytest.mark.parametrize(
    "params",
    [
        {"protocolVersion": 2, "capabilities": {}},  # info missing
        {**V2_INIT, "capabilities": {"auth": {"terminal": True}}},  # a v1-style boolean
        {**V2_INIT, "info": {"name": "zed"}},
    ],
)
def test_the_fast_path_leaves_unusual_v2_initializes_to_the_runtime(
    params: dict[str, Any],
) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    assert prelude.plain_initialize(message) is None


def test_the_fast_path_answers_v2_on_the_wire() -> None:
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    os.write(
        write_in,
        b'{"jsonrpc":"2.0","id":5,"method":"initialize","params":'
        b'{"protocolVersion":2,"info":{"name":"zed","version":"1"}}}\n',
    )
    rest, params = prelude.answer_first_initialize(read_in, write_out)
    answer = os.read(read_out, 65536)
    for fd in (read_in, write_in, read_out, write_out):
        os.close(fd)
    assert rest == b"" and params is not None and params["protocolVersion"] == 2
    import json

    frame = json.loads(answer)
    assert validate_message(frame, method="initialize", version=2) == []


V1_UPDATES: list[dict[str, Any]] = [
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
    {
        "sessionUpdate": "agent_thought_chunk",
        "content": {"type": "text", "text": "hm"},
        "messageId": "m1",
    },
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": "Write main.tf",
        "kind": "edit",
        "status": "pending",
        "rawInput": {"path": "main.tf"},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "status": "completed",
        "content": [
            {"type": "diff", "path": "/w/main.tf", "oldText": "a\n", "newText": "b\n"},
            {"type": "content", "content": {"type": "text", "text": "ok"}},
        ],
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t2",
        "status": "completed",
        "content": [{"type": "diff", "path": "/w/new.tf", "newText": "x"}],
    },
    {
        "sessionUpdate": "plan",
        "entries": [{"content": "a", "priority": "high", "status": "pending"}],
    },
    {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "review", "description": "Review", "input": {"hint": "path"}}
        ],
    },
    {
        "sessionUpdate": "config_option_update",
        "configOptions": [
            {
                "id": "model",
                "name": "Model",
                "type": "select",
                "currentValue": "a",
                "options": [{"value": "a", "name": "A"}],
            }
        ],
    },
    {"sessionUpdate": "session_info_update", "title": "VPC"},
    {"sessionUpdate": "usage_update", "used": 1, "size": 2},
]


@pytest.mark.parametrize("v1", V1_UPDATES, ids=[u["sessionUpdate"] for u in V1_UPDATES])
def test_each_v1_update_becomes_a_valid_v2_update(v1: dict[str, Any]) -> None:
    assert validate_update(v1) == []
    before = repr(v1)
    v2 = translate.update(v1)
    assert v2 is not None
    assert validate_update(v2, version=2) == []
    assert repr(v1) == before  # the agent's own dict is never changed


def test_modes_have_no_v2_update() -> None:
    assert translate.update({"sessionUpdate": "current_mode_update", "currentModeId": "x"}) is None


def test_a_diff_keeps_its_text_as_a_git_patch() -> None:
    v2 = translate.diff_content(
        {"type": "diff", "path": "/w/a.tf", "oldText": "a\n", "newText": "b\n"}
    )
    assert v2["changes"] == [{"operation": "modify", "path": "/w/a.tf", "fileType": "text"}]
    assert v2["patch"]["text"].splitlines() == [
        "diff --git /w/a.tf /w/a.tf",
        "--- /w/a.tf",
        "+++ /w/a.tf",
        "@@ -1 +1 @@",
        "-a",
        "+b",
    ]


def test_a_permission_request_becomes_a_tool_call_subject() -> None:
    v1 = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t1", "title": "Run terraform", "status": "pending"},
        "options": [{"optionId": "allow_once", "name": "Allow", "kind": "allow_once"}],
        "_meta": {"iac_code": {"reason": "outside the workspace"}},
    }
    v2 = translate.permission_request(v1)
    message = {"jsonrpc": "2.0", "id": 1, "method": "session/request_permission", "params": v2}
    assert validate_message(message, version=2) == []
    assert v2["title"] == "Run terraform" and v2["subject"]["type"] == "tool_call"


def test_v2_session_params_become_v1_params() -> None:
    v2 = {
        "cwd": "/w",
        "mcpServers": [{"type": "stdio", "name": "d", "command": "/bin/d"}],
        "replayFrom": {"type": "start"},
    }
    v1 = translate.session_params(v2)
    message = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": v1}
    assert validate_message(message) == []
    assert "replayFrom" not in v1


class _RecordingConnection:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.accepts_batches = False

    async def send_notification(self, method: str, params: object = None) -> None:
        self.sent.append((method, params))

    async def send_request(self, method: str, params: object = None) -> Any:
        self.sent.append((method, params))
        return {"outcome": {"outcome": "cancelled"}}


class _RefusingConnection(_RecordingConnection):
    async def send_request(self, method: str, params: object = None) -> Any:
        if method != "session/request_permission":
            return await super().send_request(method, params)
        self.sent.append((method, params))
        raise RuntimeError("the client went away")


@pytest.mark.parametrize("connection_type", [_RecordingConnection, _RefusingConnection])
async def test_the_rewriter_tells_its_listeners_around_each_permission_request(
    connection_type: type[_RecordingConnection],
) -> None:
    """Told before the request goes out and after it ends, answered or failed, so that the
    v2 handlers can report requires_action while the user is asked."""
    connection = connection_type()
    rewriter = V2Rewriter(connection)
    told: list[tuple[str, bool, int]] = []

    async def listener(session_id: str, asking: bool) -> None:
        told.append((session_id, asking, len(connection.sent)))

    rewriter.add_asking_listener(listener)
    v1 = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t1", "title": "Write", "status": "pending"},
        "options": [{"optionId": "allow_once", "name": "Allow", "kind": "allow_once"}],
    }
    with contextlib.suppress(RuntimeError):
        await rewriter.send_request("session/request_permission", v1)
    await rewriter.send_request("session/new", {"cwd": "/w"})
    # (asked, before anything was sent), (answered, after the one request was sent); the
    # other request is no business of the listeners
    assert told == [("s", True, 0), ("s", False, 1)]
    assert [method for method, _ in connection.sent] == [
        "session/request_permission",
        "session/new",
    ]


async def test_the_peer_passes_v1_through_and_translates_once_v2_is_agreed() -> None:
    connection = _RecordingConnection()
    peer = NegotiatedPeer(connection)  # type: ignore[arg-type]
    plan = {"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": []}}
    await peer.send_notification("session/update", plan)
    assert connection.sent[-1] == ("session/update", plan)
    peer.version = 2
    await peer.send_notification("session/update", plan)
    assert connection.sent[-1][1]["update"]["sessionUpdate"] == "plan_update"
    mode = {
        "sessionId": "s",
        "update": {"sessionUpdate": "current_mode_update", "currentModeId": "x"},
    }
    await peer.send_notification("session/update", mode)
    assert connection.sent[-1][1]["update"]["sessionUpdate"] == "plan_update"  # nothing sent


async def test_the_peer_never_sends_v1_only_client_methods_on_v2() -> None:
    from acp_bindings.errors import MethodNotFoundError

    connection = _RecordingConnection()
    peer = NegotiatedPeer(connection)  # type: ignore[arg-type]
    peer.version = 2
    with pytest.raises(MethodNotFoundError):
        await peer.send_request("fs/read_text_file", {"sessionId": "s", "path": "/x"})
    assert connection.sent == []
