"""Who may talk to the server: Origin, bearer token and protocol version (ASGI middleware).

Runs before routing, for HTTP requests and WebSocket handshakes alike:

1. ``Origin`` — browsers attach it to cross-site requests, so a page on another site cannot
   drive a local agent (DNS rebinding, drive-by fetches). A request with an Origin is accepted
   only when it is a loopback origin or listed with ``--allow-origin``; requests without one
   (editors, CLIs, SDK clients) pass. Refused with 403.
2. ``Authorization: Bearer <token>`` — when an authenticator is configured (always, off
   loopback): the single token, a tokens file or JWT (:mod:`iac_code.remote.principals`).
   Refused with 401 and ``WWW-Authenticate: Bearer``. The principal it names is put in the
   scope under :data:`PRINCIPAL_KEY` for the endpoints.
3. ``Acp-Protocol-Version`` — optional; when sent it must be a version we speak (400).

Before all of these, when the server listens on loopback, the ``Host`` header must name a
loopback host (``localhost``, ``127.0.0.1``, ``[::1]``, any port) or one listed with
``--allow-host``. A DNS-rebinding page reaches us under its own host name, so this holds even
when the browser sends no ``Origin``. Refused with 421 (Misdirected Request). A request
without ``Host`` at all is not from a browser and passes.

A refused WebSocket handshake gets the same HTTP answer through the ASGI denial-response
extension when the server offers it, and a policy-violation close otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from iac_code.remote.options import is_loopback_host
from iac_code.remote.principals import Authenticator, Refusal, SingleToken
from iac_code.remote.protocol import PROTOCOL_VERSION_HEADER, SUPPORTED_PROTOCOL_VERSIONS
from iac_code.remote.responses import AUTH_REQUIRED, error_body

__all__ = ["PRINCIPAL_KEY", "GuardMiddleware", "deny_websocket", "request_principal"]

_PUBLIC_PATHS = frozenset({"/openapi.json"})  # no secrets there; still Origin-checked
#: Probes of load balancers and orchestrators: no credentials, nothing behind them to protect.
_UNAUTHENTICATED_PATHS = frozenset({"/healthz", "/readyz"})
#: The scope key holding the authenticated principal (absent: no authenticator, or None).
PRINCIPAL_KEY = "iac_code.principal"


def request_principal(scope: Scope) -> str | None:
    """The principal the guard found for this request (None for a single-user server)."""
    principal = scope.get(PRINCIPAL_KEY)
    return principal if isinstance(principal, str) else None


class GuardMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None = None,
        authenticator: Authenticator | None = None,
        allowed_origins: Iterable[str] = (),
        check_host: bool = False,
        allowed_hosts: Iterable[str] = (),
    ) -> None:
        self.app = app
        self._check_host = check_host
        self._hosts = {host.strip().lower() for host in allowed_hosts}
        if authenticator is None and token:
            authenticator = SingleToken(token)
        self._authenticator = authenticator
        self._origins = {origin.rstrip("/").lower() for origin in allowed_origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if scope.get("path") in _UNAUTHENTICATED_PATHS:
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            refusal = await self._authenticate(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message, extra = refusal
        if scope["type"] == "http":
            await _send_http(send, status, message, extra)
        else:
            await receive()  # the handshake's websocket.connect comes first
            await deny_websocket(scope, send, status, message, extra)

    def _refusal(self, scope: Scope) -> tuple[int, str, dict[str, str]] | None:
        headers = Headers(scope=scope)
        host = headers.get("host")
        if self._check_host and host is not None and not self._host_allowed(host):
            return 421, "Host not allowed (see --allow-host)", {}
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return 403, "Origin not allowed", {}
        version = headers.get(PROTOCOL_VERSION_HEADER)
        if version is not None and version.strip() not in SUPPORTED_PROTOCOL_VERSIONS:
            supported = ", ".join(sorted(SUPPORTED_PROTOCOL_VERSIONS))
            return 400, f"Unsupported Acp-Protocol-Version (supported: {supported})", {}
        return None

    def _origin_allowed(self, origin: str) -> bool:
        normalized = origin.rstrip("/").lower()
        if normalized in self._origins:
            return True
        try:
            parts = urlsplit(normalized)
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and is_loopback_host(parts.hostname or "")

    def _host_allowed(self, host: str) -> bool:
        name = _host_name(host.strip().lower())
        return name is not None and (name in self._hosts or is_loopback_host(name))

    async def _authenticate(self, scope: Scope) -> tuple[int, str, dict[str, str]] | None:
        """After the cheap checks, so a refused Origin never costs a JWKS fetch."""
        if self._authenticator is None or scope.get("path") in _PUBLIC_PATHS:
            return None
        answer = await self._authenticator.principal(Headers(scope=scope).get("authorization"))
        if isinstance(answer, Refusal):
            extra = {"www-authenticate": "Bearer"} if answer.status == 401 else {"retry-after": "5"}
            return answer.status, answer.message, extra
        scope[PRINCIPAL_KEY] = answer
        return None


def _host_name(host: str) -> str | None:
    """The name in a ``Host`` header without its port (``[::1]:80`` -> ``::1``); None if bad."""
    if host.startswith("["):
        name, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        return name
    name, colon, port = host.partition(":")
    if colon and not port.isdigit():
        return None
    return name


def _body(status: int, message: str) -> bytes:
    code = AUTH_REQUIRED if status == 401 else -32600
    return json.dumps(error_body(message, code), separators=(",", ":")).encode()


def _header_list(extra: dict[str, str], body: bytes) -> list[tuple[bytes, bytes]]:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    headers.extend((name.encode(), value.encode()) for name, value in extra.items())
    return headers


async def _send_http(send: Send, status: int, message: str, extra: dict[str, str]) -> None:
    body = _body(status, message)
    await send(
        {"type": "http.response.start", "status": status, "headers": _header_list(extra, body)}
    )
    await send({"type": "http.response.body", "body": body})


async def deny_websocket(
    scope: Scope, send: Send, status: int, message: str, extra: dict[str, str]
) -> None:
    if "websocket.http.response" in scope.get("extensions", {}):
        body = _body(status, message)
        await send(
            {
                "type": "websocket.http.response.start",
                "status": status,
                "headers": _header_list(extra, body),
            }
        )
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": message})
