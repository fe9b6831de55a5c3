"""Classify a decoded JSON value as a JSON-RPC 2.0 message (sans-IO).

The shapes follow JSON-RPC 2.0 and SPEC §1.1:

- request: ``{"jsonrpc": "2.0", "id": int|str, "method": str, "params"?: object|array}``
- notification: the same without ``id``
- response: ``{"jsonrpc": "2.0", "id": int|str|null, "result": any}`` or ``..."error": {...}``

Booleans are rejected as ids even though Python treats them as ints, as are floats, null,
objects and arrays. ``params`` given as an array is accepted here; the router rejects it later
as invalid *params* (-32602), which is more useful to the client than an invalid request.
``params: null`` is read as absent: strictly it is not a structured value, but the official
Python SDK sends it for calls without params, and rejecting it would gain nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

from iac_code.unicode_text import has_surrogate

__all__ = [
    "InvalidMessage",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "classify",
    "is_request_id",
]

RequestId = int | str


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """True for the id types this server accepts: int (not bool) or str."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | list[Any] | None
    """None means the member was absent."""


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: dict[str, Any] | list[Any] | None
    """None means the member was absent."""


@dataclass(frozen=True, slots=True)
class Response:
    """An answer from the peer; exactly one of ``result`` / ``error`` was present."""

    id: RequestId | None
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class InvalidMessage:
    """Not a valid message. ``id`` is the id to echo (only when it was a valid id).

    ``response_like`` marks a broken *response* (no ``method``, but ``result`` or
    ``error``): it must not be answered, because our error would carry an id from our own
    outbound sequence and could be mistaken by the peer for an answer to its request.
    """

    id: RequestId | None
    reason: str
    response_like: bool = False
    #: An object with a valid id and neither ``method`` nor ``result``/``error``: a request
    #: that lost its method, or an answer that lost its outcome (``JSON.stringify`` drops
    #: ``result: undefined``). The connection decides by the id: one of its own outbound
    #: requests waiting for an answer makes it a malformed answer to that request.
    bare_id: bool = False


Message = Request | Notification | Response | InvalidMessage


def classify(value: object) -> Message:
    """Decide what kind of message ``value`` is; never raises."""
    if isinstance(value, list):
        return InvalidMessage(None, "batches are not supported")
    if not isinstance(value, dict):
        return InvalidMessage(None, "a message must be a JSON object")
    has_id = "id" in value
    raw_id = value.get("id")
    valid_id: RequestId | None = raw_id if is_request_id(raw_id) else None
    if "method" not in value and ("result" in value or "error" in value):
        return _classify_response(value, valid_id)
    if value.get("jsonrpc") != "2.0":
        return InvalidMessage(valid_id, 'jsonrpc must be "2.0"')
    if has_id and valid_id is None:
        return InvalidMessage(None, "id must be an integer or a string")
    if isinstance(valid_id, str) and has_surrogate(valid_id):
        # Not a Unicode string: it could only be echoed escaped, and clients that decode
        # strictly would drop the answer. Refused like a wrong id type (issue 19).
        return InvalidMessage(None, "id must not hold a lone UTF-16 surrogate")
    method = value.get("method")
    if method is None:
        bare = "method" not in value and valid_id is not None
        return InvalidMessage(valid_id, "method is required", bare_id=bare)
    if not isinstance(method, str):
        return InvalidMessage(valid_id, "method must be a string")
    params = value.get("params")
    if params is not None and not isinstance(params, dict | list):
        return InvalidMessage(valid_id, "params must be an object or an array")
    if valid_id is None:
        return Notification(method, params)
    return Request(valid_id, method, params)


def _classify_response(value: dict[str, Any], valid_id: RequestId | None) -> Message:
    def broken(reason: str) -> InvalidMessage:
        return InvalidMessage(valid_id, reason, response_like=True)

    if value.get("jsonrpc") != "2.0":
        return broken('jsonrpc must be "2.0"')
    if "id" not in value:
        return broken("a response needs an id")
    raw_id = value["id"]
    if raw_id is not None and valid_id is None:
        return broken("id must be an integer, a string or null")
    if "result" in value and "error" in value:
        return broken("a response has either result or error, not both")
    if "result" in value:
        return Response(valid_id, result=value["result"])
    error = value["error"]
    if not isinstance(error, dict):
        return broken("error must be an object")
    code = error.get("code")
    if isinstance(code, bool) or not isinstance(code, int):
        return broken("error.code must be an integer")
    if not isinstance(error.get("message"), str):
        return broken("error.message must be a string")
    return Response(valid_id, error=error)
