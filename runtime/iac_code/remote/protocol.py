"""Transport-level facts about ACP messages (sans-IO): headers, scoping and routing keys."""

from __future__ import annotations

import json
import re
from typing import Any, Final

from iac_code.rpc.frames import session_of

__all__ = [
    "ACCEPT_EVENT_STREAM",
    "CONNECTION_HEADER",
    "JSON_MIME",
    "LAST_EVENT_ID_HEADER",
    "PROTOCOL_VERSION_HEADER",
    "SESSION_HEADER",
    "SESSION_SCOPED_METHODS",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "has_lone_surrogate_id",
    "is_json_content_type",
    "loads_message",
    "message_key",
    "needs_session_header",
    "params_session_id",
]

CONNECTION_HEADER: Final = "acp-connection-id"
SESSION_HEADER: Final = "acp-session-id"
PROTOCOL_VERSION_HEADER: Final = "acp-protocol-version"
LAST_EVENT_ID_HEADER: Final = "last-event-id"
JSON_MIME: Final = "application/json"
ACCEPT_EVENT_STREAM: Final = "text/event-stream"
SUPPORTED_PROTOCOL_VERSIONS: Final = frozenset({"1"})

#: Methods about one session: a POST carrying one must name the session in ``Acp-Session-Id``
#: (the same list the official TypeScript SDK enforces).
SESSION_SCOPED_METHODS: Final = frozenset(
    {
        "session/cancel",
        "session/close",
        "session/delete",
        "session/fork",
        "session/load",
        "session/prompt",
        "session/resume",
        "session/set_config_option",
        "session/set_mode",
        "session/set_model",
    }
)


def is_json_content_type(value: str | None) -> bool:
    """``application/json`` with or without parameters such as ``charset``."""
    if value is None:
        return False
    return value.split(";", 1)[0].strip().lower() == JSON_MIME


def params_session_id(message: dict[str, Any]) -> str | None:
    return session_of(message.get("params"))


def needs_session_header(message: dict[str, Any]) -> bool:
    method = message.get("method")
    return method in SESSION_SCOPED_METHODS or params_session_id(message) is not None


def message_key(request_id: object) -> tuple[str, object] | None:
    """A dict key for a JSON-RPC id that keeps ``1`` and ``"1"`` apart (None for bad ids)."""
    if isinstance(request_id, bool):
        return None
    if isinstance(request_id, str):
        return ("s", request_id)
    if isinstance(request_id, int):
        return ("n", request_id)
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_message(data: str | bytes) -> Any:
    """Parse one message as strict JSON: ``NaN`` and ``Infinity`` are refused.

    Python's parser accepts them, but nothing can send them on (the agent's encoder refuses
    non-JSON numbers), so a message holding one failed later with a 500 or a closed socket
    instead of a parse error (issue 19). Raises ValueError, RecursionError or
    UnicodeDecodeError like :func:`json.loads`.
    """
    return json.loads(data, parse_constant=_no_constant)


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate_id(message: dict[str, Any]) -> bool:
    """True for a string id holding a lone UTF-16 surrogate (``"\\ud800"`` in the JSON).

    Such an id is not a valid string in any Unicode encoding: it cannot be echoed in a
    UTF-8 answer, so the request is refused as invalid (-32600) before it reaches the agent.
    """
    value = message.get("id")
    return isinstance(value, str) and _SURROGATE.search(value) is not None
