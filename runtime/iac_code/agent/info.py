"""Who the agent is and what it can do, as plain JSON-able data.

This module is imported by the start-up fast path (:mod:`iac_code.prelude`) before pydantic or
anyio are loaded, so it must stay standard-library only. The ``initialize`` handler and the
fast path both build their answer here, which keeps the two byte-for-byte identical.
"""

from __future__ import annotations

from typing import Any

from iac_code import __version__

AGENT_NAME = "iac-code"
AGENT_TITLE = "iac-code"
#: The only ACP protocol version this server speaks.
PROTOCOL_VERSION = 1
#: Clients that ask for a newer version get ours; 0 (pre-release drafts) also gets ours.
API_KEY_AUTH_METHOD_ID = "anthropic-api-key"


def negotiate_protocol_version(requested: int) -> int:
    """Answer with the version we speak: never echo a version we do not support."""
    del requested  # every request is answered with v1 (SPEC §2)
    return PROTOCOL_VERSION


def auth_methods() -> list[dict[str, Any]]:
    return [
        {
            "id": API_KEY_AUTH_METHOD_ID,
            "name": "Anthropic API key",
            "description": "Set ANTHROPIC_API_KEY in the environment iac-code is started with.",
        }
    ]


def agent_capabilities(*, images: bool) -> dict[str, Any]:
    """Capabilities advertised by ``initialize``; each one is implemented and tested."""
    return {
        "loadSession": True,
        "promptCapabilities": {"image": images, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": False, "sse": False},
        # In the order of the generated model's fields, so that the handler's dumped model
        # and the fast path's plain dict serialise to the same bytes.
        "sessionCapabilities": {
            "list": {},
            "delete": {},
            "additionalDirectories": {},
            "resume": {},
            "close": {},
            "fork": {},
        },
    }


def initialize_result(requested_version: int, *, images: bool = True) -> dict[str, Any]:
    return {
        "protocolVersion": negotiate_protocol_version(requested_version),
        "agentCapabilities": agent_capabilities(images=images),
        "authMethods": auth_methods(),
        "agentInfo": {"name": AGENT_NAME, "title": AGENT_TITLE, "version": __version__},
    }
