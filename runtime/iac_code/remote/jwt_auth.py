"""``--auth jwt``: OIDC bearer tokens verified against the identity provider's JWKS.

PyJWT (``PyJWT[crypto]``, the ``jwt`` extra) does the JOSE work: it fetches and caches the
key set, picks the key by the token's ``kid``, checks the signature, ``exp``/``nbf``,
``iss`` and ``aud``. It is imported only when ``--auth jwt`` is chosen. Its key fetch is
blocking (urllib), so verification runs in a worker thread: a slow identity provider holds
that request only, never the event loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from iac_code.remote.principals import (
    AuthConfigError,
    Refusal,
    bearer_credentials,
    check_principal_name,
)

if TYPE_CHECKING:
    from jwt import PyJWKClient

__all__ = ["JWT_ALGORITHMS", "JwtVerifier"]

#: Asymmetric algorithms only: a JWKS publishes public keys, and accepting HS256 with one
#: would let anyone who read the key sign tokens.
JWT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")


class JwtVerifier:
    def __init__(
        self, jwks_url: str, *, issuer: str, audience: str, principal_claim: str = "sub"
    ) -> None:
        try:
            import jwt
        except ImportError:
            raise AuthConfigError(
                "--auth jwt needs the jwt extra: install iac-code-acp[jwt] (PyJWT[crypto])"
            ) from None
        self._jwt = jwt
        self._keys: PyJWKClient = jwt.PyJWKClient(jwks_url, cache_keys=True, timeout=10)
        self._issuer = issuer
        self._audience = audience
        self._claim = principal_claim

    async def principal(self, authorization: str | None) -> str | Refusal | None:
        token = bearer_credentials(authorization)
        if token is None:
            return Refusal(401, "Missing bearer token")
        return await anyio.to_thread.run_sync(self._verify, token)

    def _verify(self, token: str) -> str | Refusal:
        jwt = self._jwt
        try:
            key = self._keys.get_signing_key_from_jwt(token)
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=list(JWT_ALGORITHMS),
                audience=self._audience,
                issuer=self._issuer,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWKClientConnectionError:
            return Refusal(503, "The identity provider's keys cannot be fetched; retry shortly")
        except jwt.ExpiredSignatureError:
            return Refusal(401, "The bearer token has expired")
        except jwt.InvalidIssuerError:
            return Refusal(401, "The bearer token has the wrong issuer")
        except jwt.InvalidAudienceError:
            return Refusal(401, "The bearer token has the wrong audience")
        except (jwt.PyJWTError, ValueError):
            return Refusal(401, "Invalid bearer token")
        principal = claims.get(self._claim)
        if not isinstance(principal, str) or check_principal_name(principal) is not None:
            return Refusal(401, f"The bearer token's {self._claim!r} claim is not a usable name")
        return principal
