"""Where each requirement comes from: a section of the ACP documentation or of JSON-RPC 2.0.

A citation names the page and section (as a URL with its anchor) and, where the source has
one, the normative key phrase in a few words. House rules of iac-code cite the closest
public source (usually the JSON-RPC error code table) and say that the strictness is ours.
"""

from __future__ import annotations

ACP_DOCS = "https://agentclientprotocol.com/protocol"
ACP_RFDS = "https://agentclientprotocol.com/rfds"
JSON_RPC = "https://www.jsonrpc.org/specification"


def acp(page: str, section: str, phrase: str = "") -> str:
    """A citation of ``agentclientprotocol.com/protocol/<page>#<section>``."""
    anchor = section.lower().replace(" ", "-").replace("/", "").replace("$", "")
    text = f"{ACP_DOCS}/{page}#{anchor} ({section})"
    return f'{text}: "{phrase}"' if phrase else text


def jsonrpc(section: str, anchor: str, phrase: str = "") -> str:
    """A citation of the JSON-RPC 2.0 specification."""
    text = f"{JSON_RPC}#{anchor} (JSON-RPC 2.0 {section})"
    return f'{text}: "{phrase}"' if phrase else text


def rfd(name: str, title: str, note: str = "") -> str:
    """A citation of an ACP RFD (a proposal: its rules bind only agents that adopt it)."""
    text = f"{ACP_RFDS}/{name} ({title} RFD)"
    return f"{text}; {note}" if note else text


def v2_schema(definition: str, note: str) -> str:
    """A citation of one definition of the ACP v2 draft schema (2.0.0-alpha.3)."""
    return f"{ACP_DOCS}/v2/schema#{definition.lower()} ({definition}, v2 draft): {note}"


def house(rule: str, source: str) -> str:
    """An iac-code house rule: stricter than ACP; ``source`` is the public basis."""
    return f"iac-code house rule ({rule}); basis: {source}"


# Pages cited more than once.
STDIO = acp("transports", "stdio")
ERROR_CODES = jsonrpc("§5.1 Error object", "error_object")
RESPONSE = jsonrpc("§5 Response object", "response_object")
NOTIFICATION = jsonrpc("§4.1 Notification", "notification")
REMOTE_TRANSPORT = rfd(
    "streamable-http-websocket-transport",
    "Streamable HTTP & WebSocket Transport",
    "status codes as the official TypeScript SDK 2.4.0 AcpServer answers them",
)


#: The marker of a citation whose basis is a shape the published schema requires (the
#: tier test accepts it in place of a MUST phrase).
SCHEMA_REQUIRES = "required by the published ACP schema"


def schema_requires(what: str, version: int = 1) -> str:
    """A citation of a shape the published ACP schema (of protocol ``version``) requires."""
    page = "schema" if version == 1 else f"v{version}/schema"
    return f"{ACP_DOCS}/{page}#schema (Schema): {SCHEMA_REQUIRES}: {what}"
