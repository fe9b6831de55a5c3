"""Who the agent is and what it can do, as plain JSON-able data.

This module is imported by the start-up fast path (:mod:`iac_code.prelude`) before pydantic or
anyio are loaded, so it must stay standard-library only. The ``initialize`` handler and the
fast path both build their answer here, which keeps the two byte-for-byte identical.
"""

from __future__ import annotations

from iac_code import __version__

TYPE_CHECKING = False  # typing is not imported on the start-up path (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

AGENT_NAME = "iac-code"
AGENT_TITLE = "iac-code"
#: The only ACP protocol version this server speaks.
PROTOCOL_VERSION = 1
#: Clients that ask for a newer version get ours; 0 (pre-release drafts) also gets ours.
API_KEY_AUTH_METHOD_ID = "anthropic-api-key"
#: ACP terminal authentication: the client runs our command plus these arguments in a terminal.
TERMINAL_AUTH_METHOD_ID = "terminal-login"
TERMINAL_AUTH_ARGS = ("--login",)


def negotiate_protocol_version(requested: int) -> int:
    """Answer with the version we speak: never echo a version we do not support."""
    del requested  # every request is answered with v1 (SPEC §2)
    return PROTOCOL_VERSION


def client_runs_terminal_auth(client_capabilities: Any) -> bool:
    """Whether ``clientCapabilities.auth.terminal`` is true (the only way to get that method)."""
    if not isinstance(client_capabilities, dict):
        return False
    auth = client_capabilities.get("auth")
    return isinstance(auth, dict) and auth.get("terminal") is True


def auth_methods(client_capabilities: Any = None) -> list[dict[str, Any]]:
    """The env-var method always; the terminal login only for clients that can run it."""
    methods: list[dict[str, Any]] = [
        {
            "id": API_KEY_AUTH_METHOD_ID,
            "name": "Anthropic API key",
            "description": "Set ANTHROPIC_API_KEY in the environment iac-code is started with.",
        }
    ]
    if client_runs_terminal_auth(client_capabilities):
        # Keys in the order of the generated model's fields (see agent_capabilities).
        methods.append(
            {
                "id": TERMINAL_AUTH_METHOD_ID,
                "name": "Log in with an API key",
                "description": "Type an Anthropic API key in a terminal; iac-code checks it"
                " with the endpoint and saves it for later sessions.",
                "args": list(TERMINAL_AUTH_ARGS),
                "type": "terminal",
            }
        )
    return methods


def auth_method_ids(client_capabilities: Any = None) -> list[str]:
    return [method["id"] for method in auth_methods(client_capabilities)]


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
        "auth": {"logout": {}},
    }


def initialize_result(
    requested_version: int, *, images: bool = True, client_capabilities: Any = None
) -> dict[str, Any]:
    return {
        "protocolVersion": negotiate_protocol_version(requested_version),
        "agentCapabilities": agent_capabilities(images=images),
        "authMethods": auth_methods(client_capabilities),
        "agentInfo": {"name": AGENT_NAME, "title": AGENT_TITLE, "version": __version__},
    }
