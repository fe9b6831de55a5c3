"""The validation helpers accept well-formed ACP messages and explain bad ones briefly."""

from __future__ import annotations

from typing import Any

import pytest
from acp_schema.validation import (
    validate_definition,
    validate_error,
    validate_message,
    validate_params,
    validate_result,
    validate_update,
    validator_for,
)


def request(method: str, params: Any, request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def notification(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def update(body: dict[str, Any]) -> dict[str, Any]:
    return notification("session/update", {"sessionId": "sess-1", "update": body})


VALID_MESSAGES: list[tuple[str, dict[str, Any], str | None]] = [
    (
        "initialize with capabilities",
        request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {"fs": {"readTextFile": True}, "terminal": True},
                "clientInfo": {"name": "zed", "version": "1.0"},
            },
        ),
        None,
    ),
    (
        "initialize result",
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": 1,
                "agentCapabilities": {
                    "loadSession": True,
                    "sessionCapabilities": {"list": {}, "fork": {}, "close": {}},
                },
                "authMethods": [{"id": "env", "name": "API key"}],
                "agentInfo": {"name": "iac-code", "version": "0.1.0"},
            },
        },
        "initialize",
    ),
    (
        "session/new with stdio and http servers",
        request(
            "session/new",
            {
                "cwd": "/work",
                "mcpServers": [
                    {"name": "fs", "command": "/bin/mcp", "args": [], "env": []},
                    {"type": "http", "name": "web", "url": "http://127.0.0.1:1", "headers": []},
                ],
            },
            request_id="abc",
        ),
        None,
    ),
    (
        "prompt with text and resource link",
        request(
            "session/prompt",
            {
                "sessionId": "sess-1",
                "prompt": [
                    {"type": "text", "text": "hello"},
                    {"type": "resource_link", "name": "main.tf", "uri": "file:///work/main.tf"},
                ],
            },
        ),
        None,
    ),
    (
        "prompt result with iac_code meta",
        {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"stopReason": "end_turn", "_meta": {"iac_code": {"usage": {}}}},
        },
        "session/prompt",
    ),
    (
        "agent message chunk",
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "hi"},
                "messageId": "m1",
            }
        ),
        None,
    ),
    (
        "tool call then update",
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Read main.tf",
                "kind": "read",
                "status": "pending",
            }
        ),
        None,
    ),
    (
        "session info update clearing the title",
        update({"sessionUpdate": "session_info_update", "title": None}),
        None,
    ),
    (
        "permission answer selected",
        {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"outcome": {"outcome": "selected", "optionId": "a"}},
        },
        "session/request_permission",
    ),
    (
        "set config option by value id",
        request(
            "session/set_config_option",
            {"sessionId": "s", "configId": "model", "value": "claude"},
        ),
        None,
    ),
    ("cancel request by string id", notification("$/cancel_request", {"requestId": "r-1"}), None),
    (
        "error with field detail",
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32602,
                "message": "Invalid params",
                "data": {"sessionId": "unknown session"},
            },
        },
        None,
    ),
    ("extension request", request("_iac/status", None), None),
    ("extension notification", notification("_iac/ping", {"anything": [1, 2]}), None),
    ("response without known method", {"jsonrpc": "2.0", "id": 1, "result": {"x": 1}}, None),
    ("alias of session/list", request("sessions/list", {"cwd": "/work"}), None),
]


@pytest.mark.parametrize(("description", "message", "method"), VALID_MESSAGES)
def test_valid_messages_pass(description: str, message: dict[str, Any], method: str | None) -> None:
    assert validate_message(message, method=method) == [], description


INVALID_MESSAGES: list[tuple[str, Any, str | None, str]] = [
    ("not an object", [1, 2], None, "$: "),
    ("wrong jsonrpc", {"jsonrpc": "1.0", "id": 1, "method": "initialize"}, None, "$.jsonrpc: "),
    ("no method, result or error", {"jsonrpc": "2.0", "id": 1}, None, "$: "),
    ("float id", request("initialize", {"protocolVersion": 1}, 1.5), None, "$.id: "),
    ("integral float id", request("initialize", {"protocolVersion": 1}, 2.0), None, "$.id: "),
    ("boolean id", request("initialize", {"protocolVersion": 1}, True), None, "$.id: "),
    ("object id", request("initialize", {"protocolVersion": 1}, {}), None, "$.id: "),
    ("unknown method", request("session/explode", {}), None, "$.method: "),
    ("missing required", request("session/new", {"mcpServers": []}), None, "$.params: "),
    (
        "wrong type",
        request("initialize", {"protocolVersion": "1"}),
        None,
        "$.params.protocolVersion: ",
    ),
    ("negative protocol version", request("initialize", {"protocolVersion": -1}), None, "$.params"),
    (
        "bad update tag",
        update({"sessionUpdate": "agent_speech", "content": {"type": "text", "text": "x"}}),
        None,
        "$.params.update: ",
    ),
    (
        "bad field inside tagged arm",
        update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 5}}),
        None,
        "$.params.update.content.text: ",
    ),
    (
        "bad enum value",
        update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "status": "done"}),
        None,
        "$.params.update.status: ",
    ),
    (
        "notification sent as request",
        request("session/cancel", {"sessionId": "s"}),
        None,
        "$.method: ",
    ),
    (
        "request sent as notification",
        notification("session/prompt", {"sessionId": "s", "prompt": []}),
        None,
        "$.method: ",
    ),
    (
        "bad result",
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "finished"}},
        "session/prompt",
        "$.result.stopReason: ",
    ),
    (
        "permission outcome without option",
        {"jsonrpc": "2.0", "id": 1, "result": {"outcome": {"outcome": "selected"}}},
        "session/request_permission",
        "$.result.outcome: ",
    ),
    (
        "error with bad code type",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "oops", "message": "x"}},
        None,
        "$.error.code: ",
    ),
    (
        "method_not_found data of the wrong shape",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32601, "message": "x", "data": {"method": 1}},
        },
        None,
        "$.error.data.method: ",
    ),
    (
        "response with both result and error",
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}},
        None,
        "$",
    ),
]


@pytest.mark.parametrize(("description", "message", "method", "prefix"), INVALID_MESSAGES)
def test_invalid_messages_are_reported_at_the_right_place(
    description: str, message: Any, method: str | None, prefix: str
) -> None:
    problems = validate_message(message, method=method)
    assert problems, description
    assert any(problem.startswith(prefix) for problem in problems), problems
    assert all(len(problem) < 250 and "\n" not in problem for problem in problems), problems


def test_tagged_union_reports_only_the_matching_arm() -> None:
    problems = validate_update({"sessionUpdate": "plan", "entries": [{"content": "x"}]})
    assert problems == [
        "$.entries[0]: 'priority' is a required property",
        "$.entries[0]: 'status' is a required property",
    ]


def test_unknown_and_missing_tags_are_named() -> None:
    assert validate_update({"sessionUpdate": "nope"}) == ["$: unknown sessionUpdate 'nope'"]
    assert validate_update({"content": {}}) == ["$: missing tag 'sessionUpdate'"]


def test_enum_failure_lists_the_allowed_values() -> None:
    problems = validate_result("session/prompt", {"stopReason": "finished"})
    assert problems == [
        "$.stopReason: 'finished' is not one of "
        "['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled']"
    ]


def test_params_absent_are_checked_as_empty_object() -> None:
    assert validate_params("logout", None) == []
    assert validate_params("session/cancel", None) == ["$: 'sessionId' is a required property"]


def test_params_of_unknown_methods() -> None:
    assert validate_params("_vendor/thing", [1]) == []
    assert validate_params("vendor/thing", {}) == ["$: unknown method 'vendor/thing'"]


def test_notifications_have_no_result() -> None:
    assert validate_result("session/update", {}) == [
        "$: session/update is a notification and has no result"
    ]


def test_errors_of_unlisted_codes_use_the_generic_shape() -> None:
    assert validate_error({"code": -31999, "message": "custom"}) == []
    assert validate_error({"code": -32000, "message": "x", "data": {"authMethods": ["env"]}}) == []
    assert validate_error({"code": -32000, "message": "x", "data": {"authMethods": "env"}}) != []
    assert validate_error({"message": "x"}) == ["$: 'code' is a required property"]


def test_extension_shapes_validate() -> None:
    usage = {
        "inputTokens": 10,
        "outputTokens": 5,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
        "totalTokens": 15,
    }
    relpath = "extensions/iac_code.json"
    assert validate_definition(relpath, "IacCodePromptResponseMeta", {"usage": usage}) == []
    bad = dict(usage, outputTokens=-1)
    assert validate_definition(relpath, "IacCodePromptResponseMeta", {"usage": bad}) == [
        "$.usage.outputTokens: -1 is less than the minimum of 0"
    ]


def test_validators_are_cached() -> None:
    first = validator_for("defs/content.json", "ContentBlock")
    assert validator_for("defs/content.json", "ContentBlock") is first
