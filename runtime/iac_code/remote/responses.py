"""Transport-level answers: an HTTP status plus a JSON-RPC error object as the body.

Every refusal has a JSON body of the same shape, ``{"jsonrpc": "2.0", "id": null, "error":
{"code", "message"}}``, so a client (or a person with curl) can read why, and ``/openapi.json``
describes all of them with one schema.
"""

from __future__ import annotations

import json
from typing import Any, Final

from starlette.responses import Response

__all__ = ["error_body", "transport_error"]

INVALID_REQUEST: Final = -32600
PARSE_ERROR: Final = -32700
INTERNAL_ERROR: Final = -32603
AUTH_REQUIRED: Final = -32000


def error_body(
    message: str, code: int = INVALID_REQUEST, request_id: object = None
) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def transport_error(
    status: int,
    message: str,
    *,
    code: int = INVALID_REQUEST,
    headers: dict[str, str] | None = None,
) -> Response:
    body = json.dumps(error_body(message, code), separators=(",", ":")).encode()
    return Response(body, status_code=status, media_type="application/json", headers=headers)
