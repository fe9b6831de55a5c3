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

#: What every v2 client can take, said in v1 terms to the agent (which speaks v1 inside): no
#: fs or terminal methods (v2 has none), and the update kinds v1 gates behind a capability
#: that v2 sends to everyone (notices, compaction).
V1_CLIENT_CAPABILITIES: dict[str, Any] = {"session": {"notices": {}, "compaction": {}}}


def v1_client_capabilities(v2_capabilities: object) -> dict[str, Any]:
    """:data:`V1_CLIENT_CAPABILITIES`, plus form elicitation when the v2 client advertised
    ``capabilities.elicitation.form`` (the agent then offers its ``ask_user`` tool; the
    elicitation shapes are the same in both versions). URL mode is never used."""
    caps = dict(V1_CLIENT_CAPABILITIES)
    found = v2_capabilities.get("elicitation") if isinstance(v2_capabilities, dict) else None
    if isinstance(found, dict) and isinstance(found.get("form"), dict):
        caps["elicitation"] = {"form": {}}
    return caps


def agent_capabilities(*, images: bool) -> dict[str, Any]:
    """What a v2 connection offers: only what the v2 handlers implement and test.

    In v2 a capability is an object when supported and absent otherwise; ``session/list``,
    ``session/resume`` and ``session/close`` need no capability at all.
    """
    # In the order of the generated model's fields (image before embeddedContext).
    prompt: dict[str, Any] = {"image": {}} if images else {}
    prompt["embeddedContext"] = {}
    return {
        "session": {
            "prompt": prompt,
            "mcp": {"stdio": {}},
            "delete": {},
            "additionalDirectories": {},
        },
    }


def client_runs_terminal_auth(client_capabilities: Any) -> bool:
    """Whether the v2 client declared ``capabilities.auth.terminal`` (an object, never a flag)."""
    if not isinstance(client_capabilities, dict):
        return False
    auth = client_capabilities.get("auth")
    return isinstance(auth, dict) and isinstance(auth.get("terminal"), dict)


def auth_methods(client_capabilities: Any = None) -> list[dict[str, Any]]:
    """The env-var method always; the terminal login (as in v1) only for clients that run it."""
    # Keys in the order of the generated models' fields, so that the handler's dumped model
    # and the start-up fast path's plain dict serialise to the same bytes.
    methods: list[dict[str, Any]] = [
        {
            "methodId": info.API_KEY_AUTH_METHOD_ID,
            "name": "Anthropic API key",
            "description": "Set ANTHROPIC_API_KEY in the environment iac-code is started with.",
            "type": "agent",
        }
    ]
    if client_runs_terminal_auth(client_capabilities):
        methods.append(
            {
                "methodId": info.TERMINAL_AUTH_METHOD_ID,
                "name": "Log in with an API key",
                "description": "Type an Anthropic API key in a terminal; iac-code checks it"
                " with the endpoint and saves it for later sessions.",
                "args": list(info.TERMINAL_AUTH_ARGS),
                "type": "terminal",
            }
        )
    return methods


def initialize_result(*, images: bool = True, client_capabilities: Any = None) -> dict[str, Any]:
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "info": {"name": info.AGENT_NAME, "title": info.AGENT_TITLE, "version": __version__},
        "capabilities": agent_capabilities(images=images),
        "authMethods": auth_methods(client_capabilities),
    }
