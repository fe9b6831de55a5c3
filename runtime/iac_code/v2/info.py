"""The v2 ``initialize`` result as plain JSON-able data (standard library only).

Imported by the start-up fast path, which answers a v2 ``initialize`` before the runtime is
loaded; the full v2 handler returns the same value, so both answers are identical.
"""

from __future__ import annotations

from iac_code import __version__
from iac_code.agent import info

TYPE_CHECKING = False  # typing is not imported on the start-up path (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

PROTOCOL_VERSION = 2


def agent_capabilities(*, images: bool) -> dict[str, Any]:
    """What a v2 connection offers: only what the v2 handlers implement and test.

    In v2 a capability is an object when supported and absent otherwise; ``session/list``,
    ``session/resume`` and ``session/close`` need no capability at all.
    """
    prompt: dict[str, Any] = {"embeddedContext": {}}
    if images:
        prompt["image"] = {}
    return {
        "session": {
            "prompt": prompt,
            "mcp": {"stdio": {}},
            "delete": {},
            "additionalDirectories": {},
        },
    }


def auth_methods() -> list[dict[str, Any]]:
    return [
        {
            "type": "agent",
            "methodId": info.API_KEY_AUTH_METHOD_ID,
            "name": "Anthropic API key",
            "description": "Set ANTHROPIC_API_KEY in the environment iac-code is started with.",
        }
    ]


def initialize_result(*, images: bool = True) -> dict[str, Any]:
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "info": {"name": info.AGENT_NAME, "title": info.AGENT_TITLE, "version": __version__},
        "capabilities": agent_capabilities(images=images),
        "authMethods": auth_methods(),
    }
