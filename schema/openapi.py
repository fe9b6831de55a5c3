"""OpenAPI 3.1 description of the remote ACP transport, generated from ``schema/``.

``python -m acp_schema.codegen`` writes it to ``generated/acp_bindings/openapi.json`` (and
``--check`` compares it); ``iac-code acp --transport http`` serves it at ``/openapi.json``.

Every definition of every schema file becomes one entry of ``components/schemas`` (names are
unique across files by the schema rules), with cross-file references rewritten to point
there. The POST body is one JSON-RPC message: a request or notification the agent handles,
whose ``params`` reference the per-method request schema, or the client's answer to a
request the agent sent. Status codes and headers are those of ``iac_code.remote``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_schema.codegen_common import SCHEMA_DIR, SCHEMA_FOLDERS, load_index

__all__ = ["build_document", "render"]

_REF_PREFIX = "#/components/schemas/"
_ERROR_REF = {"$ref": _REF_PREFIX + "TransportError"}
_JSON_ERROR = {"application/json": {"schema": _ERROR_REF}}


def _collect_definitions(schema_dir: Path) -> dict[str, Any]:
    definitions: dict[str, Any] = {}
    for folder in SCHEMA_FOLDERS:
        for path in sorted((schema_dir / folder).glob("*.json")):
            document = json.loads(path.read_text(encoding="utf-8"))
            for name, definition in document.get("$defs", {}).items():
                if name in definitions:
                    raise ValueError(f"definition {name} is defined twice ({path.name})")
                definitions[name] = _rewrite_refs(definition)
    return dict(sorted(definitions.items()))


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        rewritten = {key: _rewrite_refs(value) for key, value in node.items()}
        ref = rewritten.get("$ref")
        if isinstance(ref, str) and "#/$defs/" in ref:
            rewritten["$ref"] = _REF_PREFIX + ref.rsplit("/", 1)[1]
        return rewritten
    if isinstance(node, list):
        return [_rewrite_refs(item) for item in node]
    return node


def _message_name(method: str, suffix: str) -> str:
    words = method.replace("$/", "protocol/").replace("/", "_").split("_")
    return "".join(word[:1].upper() + word[1:] for word in words) + suffix


def _client_messages(index: dict[str, Any]) -> dict[str, Any]:
    """One envelope schema per message a client may POST."""
    messages: dict[str, Any] = {}
    request_id = {"$ref": _REF_PREFIX + "RequestId"}
    for method, entry in sorted(index["methods"].items()):
        params = {"$ref": _REF_PREFIX + entry["params"]}
        method_const = {"const": method}
        if entry["side"] in ("agent", "protocol") and entry["kind"] == "request":
            messages[_message_name(method, "Call")] = {
                "type": "object",
                "description": f"A `{method}` request.",
                "properties": {
                    "jsonrpc": {"const": "2.0"},
                    "id": request_id,
                    "method": method_const,
                    "params": params,
                },
                "required": ["jsonrpc", "id", "method", "params"],
            }
        elif entry["side"] in ("agent", "protocol"):
            messages[_message_name(method, "Call")] = {
                "type": "object",
                "description": f"A `{method}` notification.",
                "properties": {
                    "jsonrpc": {"const": "2.0"},
                    "method": method_const,
                    "params": params,
                },
                "required": ["jsonrpc", "method", "params"],
            }
        elif entry["kind"] == "request" and entry["result"]:
            messages[_message_name(method, "Answer")] = {
                "type": "object",
                "description": f"The client's answer to a `{method}` request from the agent.",
                "properties": {
                    "jsonrpc": {"const": "2.0"},
                    "id": request_id,
                    "result": {"$ref": _REF_PREFIX + entry["result"]},
                },
                "required": ["jsonrpc", "id", "result"],
            }
    messages["ErrorAnswer"] = {
        "description": "The client's error answer to a request from the agent.",
        "$ref": _REF_PREFIX + "JsonRpcErrorResponse",
    }
    return messages


def _transport_schemas() -> dict[str, Any]:
    return {
        "TransportError": {
            "type": "object",
            "description": "Why the transport refused a request: a JSON-RPC error with a null id"
            " (or, for a failed initialize, the agent's error answer).",
            "properties": {
                "jsonrpc": {"const": "2.0"},
                "id": {"type": ["string", "integer", "null"]},
                "error": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "integer"},
                        "message": {"type": "string"},
                        "data": {},
                    },
                    "required": ["code", "message"],
                },
            },
            "required": ["jsonrpc", "id", "error"],
        },
        "InitializeAnswer": {
            "type": "object",
            "description": "The agent's answer to `initialize`.",
            "properties": {
                "jsonrpc": {"const": "2.0"},
                "id": {"$ref": _REF_PREFIX + "RequestId"},
                "result": {"$ref": _REF_PREFIX + "InitializeResponse"},
            },
            "required": ["jsonrpc", "id", "result"],
        },
    }


def _header(name: str, description: str, *, required: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": required,
        "description": description,
        "schema": {"type": "string", "maxLength": 1024},
    }


_CONNECTION = "Acp-Connection-Id"
_SESSION = "Acp-Session-Id"
_VERSION_HEADER = {
    "name": "Acp-Protocol-Version",
    "in": "header",
    "required": False,
    "description": "ACP protocol version the client speaks; when sent it must be 1.",
    "schema": {"type": "string", "enum": ["1"]},
}


def _errors(*statuses: int) -> dict[str, Any]:
    texts = {
        400: "Malformed message, missing or mismatched header, batch (-32600), bad JSON (-32700)",
        401: "Bearer token missing or wrong",
        403: "Origin not allowed",
        404: "Unknown or closed Acp-Connection-Id, or one another replica holds: start a new"
        " connection (initialize), then load or resume the session (error.data.reconnect)",
        405: "Method not allowed",
        406: "GET without Accept: text/event-stream",
        408: "The body did not arrive within the body deadline (--body-timeout, 30 s);"
        " the connection is closed",
        409: "The stream already has a reader",
        410: "Last-Event-ID is older than the replay buffer",
        413: "Body larger than the limit",
        415: "Content-Type is not application/json",
        421: "Host is not a loopback name or one allowed with --allow-host (loopback servers)",
        503: "Connection limit reached, the server is shutting down, or the bodies being"
        " received by all connections would go past their cap (--max-body-buffer-mib)",
        504: "initialize took too long",
    }
    responses: dict[str, Any] = {}
    for status in statuses:
        response: dict[str, Any] = {"description": texts[status], "content": _JSON_ERROR}
        if status == 401:
            response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
        if status == 503:
            response["headers"] = {"Retry-After": {"schema": {"type": "string"}}}
        responses[str(status)] = response
    return responses


def build_document(schema_dir: Path = SCHEMA_DIR) -> dict[str, Any]:
    index = load_index(schema_dir)
    schemas = _collect_definitions(schema_dir)
    client_messages = _client_messages(index)
    schemas.update(_transport_schemas())
    schemas.update(client_messages)
    connection_optional = _header(
        _CONNECTION, "The connection, from the initialize answer; absent only on initialize."
    )
    session = _header(
        _SESSION,
        "The session a message is about; required for session methods and for answers to"
        " requests that arrived on a session stream, and must equal params.sessionId.",
    )
    post = {
        "operationId": "postMessage",
        "summary": "Send one JSON-RPC message to the agent",
        "description": "`initialize` without Acp-Connection-Id opens a connection and is answered"
        " here; every other message is accepted with 202 and answered on a stream.",
        "parameters": [connection_optional, session, _VERSION_HEADER],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {"oneOf": [{"$ref": _REF_PREFIX + name} for name in client_messages]}
                }
            },
        },
        "responses": {
            "200": {
                "description": "The initialize answer; the new connection is in the header.",
                "headers": {_CONNECTION: {"required": True, "schema": {"type": "string"}}},
                "content": {
                    "application/json": {"schema": {"$ref": _REF_PREFIX + "InitializeAnswer"}}
                },
                "links": {
                    "SendOnConnection": {
                        "operationId": "postMessage",
                        "parameters": {
                            "header.Acp-Connection-Id": "$response.header.Acp-Connection-Id"
                        },
                    },
                    "CloseConnection": {
                        "operationId": "closeConnection",
                        "parameters": {
                            "header.Acp-Connection-Id": "$response.header.Acp-Connection-Id"
                        },
                    },
                },
            },
            "202": {"description": "Accepted; any answer arrives on a stream."},
            **_errors(400, 401, 403, 404, 408, 413, 415, 421, 503, 504),
        },
    }
    get = {
        "operationId": "openStream",
        "summary": "Open the connection stream, or a session stream, as Server-Sent Events",
        "description": "Each event has an `id:` and one JSON-RPC message as `data:`. Reconnect"
        " with Last-Event-ID to receive what followed that event. With `Upgrade: websocket`"
        " the same path switches protocols (101, Acp-Connection-Id header) and carries one"
        " JSON-RPC message per text frame in both directions.",
        "parameters": [
            _header(_CONNECTION, "The connection.", required=True),
            _header(_SESSION, "Open this session's stream instead of the connection stream."),
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "description": "Resume after this event id of the same stream.",
                "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"},
            },
            _VERSION_HEADER,
        ],
        "responses": {
            "200": {
                "description": "The event stream.",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            },
            **_errors(400, 401, 403, 404, 406, 409, 410, 421),
        },
    }
    delete = {
        "operationId": "closeConnection",
        "summary": "End a connection and its sessions",
        "parameters": [_header(_CONNECTION, "The connection.", required=True), _VERSION_HEADER],
        "responses": {
            "202": {"description": "The connection is closing; its streams end."},
            **_errors(400, 401, 403, 404, 421),
        },
    }
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "iac-code remote ACP",
            "version": str(index.get("protocolVersion", 1)),
            "description": "The Agent Client Protocol over Streamable HTTP (POST + SSE) and"
            " WebSocket, as served by `iac-code acp --transport http`.",
        },
        "servers": [{"url": "http://127.0.0.1:8765"}],
        "security": [{}, {"bearerAuth": []}],
        "paths": {"/acp": {"post": post, "get": get, "delete": delete}},
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "Required whenever the server listens off loopback"
                    " (IACCODE_ACP_HTTP_TOKEN).",
                }
            },
        },
    }


def render(schema_dir: Path = SCHEMA_DIR) -> str:
    return json.dumps(build_document(schema_dir), indent=2, ensure_ascii=False) + "\n"
