"""Who is calling: the principal behind a request's bearer token (``--auth``).

Three ways to know it, each an :class:`Authenticator`:

- :class:`SingleToken` — the one ``IACCODE_ACP_HTTP_TOKEN`` of a one-user server. Its principal
  is ``None``: sessions carry no owner, exactly as before principals existed.
- :class:`TokenTable` — ``--auth tokens FILE``: one ``TOKEN PRINCIPAL`` pair per line.
- :class:`iac_code.remote.jwt_auth.JwtVerifier` — ``--auth jwt``: OIDC access tokens checked
  against the identity provider's published keys.

A principal names a folder under ``--workspace-root``, so its characters are limited to a
safe set (:func:`check_principal_name`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = [
    "ANONYMOUS",
    "CURRENT_PRINCIPAL",
    "AuthConfigError",
    "Authenticator",
    "Refusal",
    "SingleToken",
    "TokenTable",
    "bearer_credentials",
    "check_principal_name",
]

#: What an authenticator answers for a request it accepts without a named principal.
ANONYMOUS: str | None = None

#: The principal of the connection whose agent is being built (see RemoteConnection.run).
CURRENT_PRINCIPAL: ContextVar[str | None] = ContextVar("iac_code_principal", default=None)

_PRINCIPAL = re.compile(r"[A-Za-z0-9_@+=:|-][A-Za-z0-9._@+=:|-]{0,127}")


class AuthConfigError(Exception):
    """The ``--auth`` configuration cannot be used (one line for the operator)."""


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: its HTTP status (401, or 503 when the keys are unreachable)."""

    status: int
    message: str


class Authenticator(Protocol):
    async def principal(self, authorization: str | None) -> str | Refusal | None:
        """The caller's principal (None for the single user), or why it is refused."""
        ...


def bearer_credentials(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else None."""
    if authorization is None:
        return None
    scheme, _, credentials = authorization.partition(" ")
    if scheme.lower() != "bearer" or not credentials.strip():
        return None
    return credentials.strip()


def check_principal_name(name: str) -> str | None:
    """Why ``name`` cannot be a principal, or None. It becomes a folder name, so: 1-128 of
    letters, digits and ``._@+=:|-``, not starting with a dot."""
    if _PRINCIPAL.fullmatch(name) is None:
        return "a principal is 1-128 letters, digits or ._@+=:|- and does not start with '.'"
    return None


_MISSING = Refusal(401, "Missing or invalid bearer token")


class SingleToken:
    """One shared token; compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def principal(self, authorization: str | None) -> str | Refusal | None:
        credentials = bearer_credentials(authorization)
        # compare_digest takes the same time wherever the first difference is.
        if credentials is None or not hmac.compare_digest(credentials.encode(), self._token):
            return _MISSING
        return ANONYMOUS


class TokenTable:
    """``TOKEN PRINCIPAL`` pairs. Tokens are kept as SHA-256 digests and looked up by digest,
    so the lookup's timing says nothing about how much of a guessed token was right."""

    def __init__(self, pairs: dict[str, str]) -> None:
        self._by_digest = {_digest(token): principal for token, principal in pairs.items()}

    def __len__(self) -> int:
        return len(self._by_digest)

    @classmethod
    def from_file(cls, path: Path) -> TokenTable:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AuthConfigError(f"cannot read the tokens file {path}: {exc}") from None
        return cls(parse_token_lines(text, str(path)))

    async def principal(self, authorization: str | None) -> str | Refusal | None:
        credentials = bearer_credentials(authorization)
        if credentials is None:
            return _MISSING
        principal = self._by_digest.get(_digest(credentials))
        return _MISSING if principal is None else principal


def parse_token_lines(text: str, source: str) -> dict[str, str]:
    """``TOKEN PRINCIPAL`` per line; ``#`` starts a comment line; blank lines are skipped."""
    pairs: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        where = f"{source} line {number}"
        if len(fields) != 2:
            raise AuthConfigError(f"{where}: expected 'TOKEN PRINCIPAL', got {len(fields)} fields")
        token, principal = fields
        problem = check_principal_name(principal)
        if problem is not None:
            raise AuthConfigError(f"{where}: bad principal {principal!r}: {problem}")
        if len(token) < 16:
            raise AuthConfigError(f"{where}: the token is shorter than 16 characters")
        if token in pairs:
            raise AuthConfigError(f"{where}: this token is listed twice")
        pairs[token] = principal
    if not pairs:
        raise AuthConfigError(f"{source}: no 'TOKEN PRINCIPAL' line")
    return pairs


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
