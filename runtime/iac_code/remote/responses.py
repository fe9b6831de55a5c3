"""Transport-level answers: an HTTP status plus a JSON-RPC error object as the body.

Every refusal has a JSON body of the same shape, ``{"jsonrpc": "2.0", "id": null, "error":
{"code", "message"}}``, so a client (or a person with curl) can read why, and ``/openapi.json``
describes all of them with one schema.
"""

from __future__ import annotations

import json
from typing import Any, Final

from starlette.responses import Response

__all__ = [
    "error_body",
    "request_id_of",
    "transport_error",
    "unknown_connection",
    "with_request_id",
]

INVALID_REQUEST: Final = -32600
PARSE_ERROR: Final = -32700
INTERNAL_ERROR: Final = -32603
AUTH_REQUIRED: Final = -32000


def error_body(
    message: str, code: int = INVALID_REQUEST, request_id: object = None, data: object = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def transport_error(
    status: int,
    message: str,
    *,
    code: int = INVALID_REQUEST,
    headers: dict[str, str] | None = None,
    request_id: object = None,
    data: object = None,
) -> Response:
    body = json.dumps(error_body(message, code, request_id, data), separators=(",", ":")).encode()
    return Response(body, status_code=status, media_type="application/json", headers=headers)


#: What a client must do after a 404 for its connection: the same whether the connection
#: ended here or lives on another replica (a balancer that lost its affinity, a replica that
#: died), so the answer tells nothing about other replicas' connections.
RECONNECT = "initialize"


def unknown_connection() -> Response:
    """404 for an ``Acp-Connection-Id`` this process does not hold. Such a request is never
    served here: a connection's state (its sessions, streams and pending requests) lives in
    the memory of the replica that answered its ``initialize``. The body tells the client to
    start over as the transport's rules say for a 404: a new ``initialize`` without the
    header, then ``session/load`` or ``session/resume`` (sessions live in the shared store)."""
    return transport_error(
        404,
        "Unknown Acp-Connection-Id: start a new connection with initialize,"
        " then load or resume the session.",
        data={
            "reason": "The connection ended or lives on another server.",
            "reconnect": RECONNECT,
        },
    )


def request_id_of(message: dict[str, Any]) -> str | int | None:
    """The id a refusal of ``message`` must echo: a request's valid id, else None.

    JSON-RPC answers every request under its own id whenever the id could be read, so a
    client matching answers by id is not left waiting for one that came back as ``null``.
    Responses (the client's answers to agent requests) and notifications get no id.
    """
    if "method" not in message:
        return None
    value = message.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return value


def with_request_id(response: Response, request_id: str | int) -> Response:
    """The same refusal with ``id`` set (the status, headers and error are kept)."""
    try:
        body = json.loads(bytes(response.body))
    except ValueError:
        return response
    if not isinstance(body, dict) or "error" not in body or body.get("id") is not None:
        return response
    body["id"] = request_id
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
    return Response(
        json.dumps(body, separators=(",", ":")).encode(),
        status_code=response.status_code,
        media_type="application/json",
        headers=headers,
    )
