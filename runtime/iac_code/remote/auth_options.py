"""From ``--auth``, ``--jwt-*`` and ``--workspace-root`` to the server's authenticator.

Every mistake is an :class:`AuthConfigError` whose message is the one line the command
prints before exiting with status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from iac_code.remote.principals import AuthConfigError, Authenticator, TokenTable

__all__ = ["AuthConfigError", "authenticator_from_args", "workspace_root"]


def authenticator_from_args(args: argparse.Namespace) -> Authenticator | None:
    """None without ``--auth`` (the single ``IACCODE_ACP_HTTP_TOKEN``, if any, applies)."""
    auth: list[str] | None = args.auth
    if not auth:
        _no_jwt_options_without_jwt(args)
        return None
    kind, rest = auth[0], auth[1:]
    if kind == "tokens":
        if len(rest) != 1:
            raise AuthConfigError("--auth tokens needs exactly one FILE")
        _no_jwt_options_without_jwt(args)
        return TokenTable.from_file(Path(rest[0]))
    if kind == "jwt":
        if rest:
            raise AuthConfigError("--auth jwt takes no argument (use --jwt-jwks-url and others)")
        missing = [
            flag
            for flag, value in (
                ("--jwt-jwks-url", args.jwt_jwks_url),
                ("--jwt-issuer", args.jwt_issuer),
                ("--jwt-audience", args.jwt_audience),
            )
            if not value
        ]
        if missing:
            raise AuthConfigError(f"--auth jwt needs {', '.join(missing)}")
        from iac_code.remote.jwt_auth import JwtVerifier

        return JwtVerifier(
            args.jwt_jwks_url,
            issuer=args.jwt_issuer,
            audience=args.jwt_audience,
            principal_claim=args.jwt_principal_claim,
        )
    raise AuthConfigError(f"--auth must be 'tokens FILE' or 'jwt', not {kind!r}")


def _no_jwt_options_without_jwt(args: argparse.Namespace) -> None:
    if args.jwt_jwks_url or args.jwt_issuer or args.jwt_audience:
        raise AuthConfigError("--jwt-jwks-url, --jwt-issuer and --jwt-audience need --auth jwt")


def workspace_root(args: argparse.Namespace) -> Path | None:
    """``--workspace-root`` as an absolute path; it must be an existing directory."""
    if not args.workspace_root:
        return None
    root = Path(args.workspace_root).resolve()
    if not root.is_dir():
        raise AuthConfigError(f"--workspace-root {args.workspace_root}: not a directory")
    return root
