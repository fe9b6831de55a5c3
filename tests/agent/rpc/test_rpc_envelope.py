"""Envelope classification, one row per case of JSON-RPC 2.0 and SPEC §1.1."""

from __future__ import annotations

import pytest
from iac_code.rpc.envelope import (
    InvalidMessage,
    Notification,
    Request,
    Response,
    classify,
)

V = {"jsonrpc": "2.0"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({**V, "id": 1, "method": "m", "params": {"a": 1}}, Request(1, "m", {"a": 1})),
        ({**V, "id": "abc", "method": "m"}, Request("abc", "m", None)),
        ({**V, "id": 0, "method": "m", "params": [1]}, Request(0, "m", [1])),
        ({**V, "id": -5, "method": "m", "params": {}}, Request(-5, "m", {})),
        ({**V, "method": "note", "params": {"x": 1}}, Notification("note", {"x": 1})),
        ({**V, "method": "note"}, Notification("note", None)),
        ({**V, "method": "note", "params": None}, Notification("note", None)),
        ({**V, "id": 9, "method": "m", "params": None}, Request(9, "m", None)),
        ({**V, "id": 3, "result": {"ok": True}}, Response(3, result={"ok": True})),
        ({**V, "id": "s", "result": None}, Response("s", result=None)),
        (
            {**V, "id": 4, "error": {"code": -32601, "message": "nope"}},
            Response(4, error={"code": -32601, "message": "nope"}),
        ),
        (
            {**V, "id": None, "error": {"code": -32700, "message": "bad"}},
            Response(None, error={"code": -32700, "message": "bad"}),
        ),
    ],
)
def test_valid_messages_are_classified(value: object, expected: object) -> None:
    assert classify(value) == expected


@pytest.mark.parametrize(
    ("value", "echo_id"),
    [
        ([{**V, "id": 1, "method": "m"}], None),  # batch
        ([], None),
        (42, None),
        ("text", None),
        (None, None),
        (True, None),
        ({**V, "id": 1}, 1),  # missing method
        ({**V, "id": "x"}, "x"),
        ({"id": 1, "method": "m"}, 1),  # missing jsonrpc
        ({"jsonrpc": "1.0", "id": 2, "method": "m"}, 2),  # wrong jsonrpc
        ({"jsonrpc": 2.0, "id": 2, "method": "m"}, 2),
        ({**V, "id": True, "method": "m"}, None),  # bool id
        ({**V, "id": False, "method": "m"}, None),
        ({**V, "id": 1.5, "method": "m"}, None),  # float id
        ({**V, "id": 1.0, "method": "m"}, None),
        ({**V, "id": {"n": 1}, "method": "m"}, None),  # object id
        ({**V, "id": [1], "method": "m"}, None),  # array id
        ({**V, "id": None, "method": "m"}, None),  # null id on a request
        ({**V, "id": 7, "method": 5}, 7),  # method not a string
        ({**V, "id": 7, "method": None}, 7),
        ({**V, "id": 8, "method": "m", "params": "p"}, 8),  # params not structured
        ({**V, "method": "m", "params": 3}, None),
    ],
)
def test_invalid_requests_echo_only_a_valid_id(value: object, echo_id: object) -> None:
    message = classify(value)
    assert isinstance(message, InvalidMessage)
    assert message.id == echo_id
    assert not message.response_like
    assert message.reason


@pytest.mark.parametrize(
    "value",
    [
        {**V, "id": 1, "result": 1, "error": {"code": 1, "message": "m"}},
        {**V, "result": 1},
        {**V, "id": True, "result": 1},
        {**V, "id": 1.5, "result": 1},
        {"jsonrpc": "1.0", "id": 1, "result": 1},
        {**V, "id": 1, "error": "boom"},
        {**V, "id": 1, "error": {"code": "1", "message": "m"}},
        {**V, "id": 1, "error": {"code": True, "message": "m"}},
        {**V, "id": 1, "error": {"code": 1}},
    ],
)
def test_malformed_responses_are_marked_response_like(value: object) -> None:
    message = classify(value)
    assert isinstance(message, InvalidMessage)
    assert message.response_like


def test_a_string_id_with_a_lone_surrogate_is_an_invalid_request() -> None:
    # Issue 19: such an id cannot be echoed as UTF-8; refused like an id of a wrong type.
    message = classify({"jsonrpc": "2.0", "id": "a\ud800", "method": "initialize"})
    assert isinstance(message, InvalidMessage)
    assert message.id is None and "surrogate" in message.reason
    paired = classify({"jsonrpc": "2.0", "id": "\U0001f600", "method": "initialize"})
    assert not isinstance(paired, InvalidMessage)
