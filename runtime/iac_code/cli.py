"""The ``iac-code`` command line.

``iac-code acp`` is what editors start; it must reach the ``initialize`` answer quickly, so
this module imports only the standard library and the start-up fast path.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from iac_code import __version__

if TYPE_CHECKING:
    from iac_code.settings import Settings


def _env_help() -> str:
    from iac_code.settings import ENVIRONMENT_VARIABLES

    width = max(len(name) for name in ENVIRONMENT_VARIABLES)
    lines = [f"  {name.ljust(width)}  {text}" for name, text in ENVIRONMENT_VARIABLES.items()]
    return (
        "environment variables:\n"
        + "\n".join(lines)
        + "\n\nOptional config file: $IAC_CODE_HOME/config.toml (keys: model, models, base_url,"
        " log_level, log_file, max_turn_requests, max_tokens, retry_base_delay, child_env_allow,"
        " secret_env, max_output_backlog_mib, max_open_sessions). Flags override"
        " the environment, which overrides the config file."
    )


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit status 2 (editors show one line well)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def _log_level(text: str) -> str:
    from iac_code.settings import LOG_LEVELS

    level = text.upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(LOG_LEVELS)}")
    return level


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="iac-code",
        description="An infrastructure-as-code coding agent for editors (Agent Client Protocol).",
    )
    parser.add_argument("--version", action="version", version=f"iac-code {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    acp = commands.add_parser(
        "acp",
        help="serve the Agent Client Protocol on stdin/stdout (what editors run)",
        description="Serve the Agent Client Protocol (v1, and v2 to clients that ask for it)"
        " over stdio: newline-delimited JSON-RPC 2.0 on stdin/stdout, logs on stderr (and"
        " --log-file). With --transport http, serve Streamable HTTP and WebSocket instead.",
        epilog=_env_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    acp.add_argument("--model", help="default model for new sessions (env IAC_CODE_MODEL)")
    acp.add_argument("--base-url", help="Anthropic-compatible endpoint (env ANTHROPIC_BASE_URL)")
    acp.add_argument(
        "--home", type=Path, help="state folder (env IAC_CODE_HOME, default ~/.iac-code)"
    )
    acp.add_argument(
        "--log-level",
        type=_log_level,
        help="DEBUG, INFO, WARNING or ERROR (env IAC_CODE_LOG_LEVEL)",
    )
    acp.add_argument("--log-file", type=Path, help="also append logs to this file")
    acp.add_argument(
        "--max-line-bytes",
        type=_positive_int,
        help="largest accepted JSON-RPC line (default 64 MiB)",
    )
    acp.add_argument(
        "--max-turn-requests",
        type=_positive_int,
        help="model requests allowed per prompt turn (default 50)",
    )

    acp.add_argument(
        "--max-open-sessions",
        type=_positive_int,
        help="sessions one client may have open at once (default 2000)",
    )
    acp.add_argument(
        "--child-env-allow",
        action="append",
        metavar="NAME",
        help="pass this credential variable (or pattern) to bash and MCP servers anyway;"
        " repeatable (env IAC_CODE_CHILD_ENV_ALLOW)",
    )
    remote = acp.add_argument_group(
        "remote transport",
        "With --transport http, ACP is served on http://HOST:PORT/acp (Streamable HTTP with SSE,"
        " and WebSocket on the same path). A bearer token is read from IACCODE_ACP_HTTP_TOKEN;"
        " it is required when HOST is not a loopback address.",
    )
    remote.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="default: stdio"
    )
    remote.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    remote.add_argument("--port", type=int, default=8765, help="port to listen on (8765; 0 = any)")
    remote.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="browser Origin allowed besides loopback ones (repeatable)",
    )
    remote.add_argument("--max-connections", type=int, help="live connections (default 256)")
    remote.add_argument(
        "--idle-timeout", type=float, help="seconds before an unused connection closes (600)"
    )

    return parser


def acp_settings(args: argparse.Namespace) -> Settings:
    """Settings for ``iac-code acp``: config file, then environment, then flags."""
    from iac_code.settings import load_settings

    settings = load_settings()
    if args.home is not None:
        settings = settings.with_overrides(home=args.home)
    settings = settings.with_overrides(
        model=args.model,
        base_url=args.base_url,
        log_level=args.log_level,
        log_file=args.log_file,
        max_line_bytes=args.max_line_bytes,
        max_turn_requests=args.max_turn_requests,
        max_open_sessions=args.max_open_sessions,
    )
    if args.log_level is not None:  # the flag wins: a bad level elsewhere no longer matters
        settings = replace(settings, log_level_warning=None)
    if args.child_env_allow:
        allowed = (*settings.child_env_allow, *args.child_env_allow)
        settings = settings.with_overrides(child_env_allow=allowed)
    if settings.model not in settings.models:
        settings = settings.with_overrides(models=(settings.model, *settings.models))
    return settings


#: What ``--transport http`` imports beyond a stdio session: the ``[http]`` extra.
HTTP_EXTRA_MODULES = ("starlette", "hypercorn")


def _missing_http_extra() -> str | None:
    """A one-line message when the ``[http]`` extra is not installed, else None."""
    import importlib.util

    missing = [name for name in HTTP_EXTRA_MODULES if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"iac-code: --transport http needs the http extra (missing: {', '.join(missing)});"
        " install iac-code-acp[http], e.g. pipx install --preinstall ./generated './runtime[http]'"
    )


def _serve_http(args: argparse.Namespace) -> int:
    import os

    problem = _missing_http_extra()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2

    from iac_code.remote.options import TOKEN_ENV, RemoteLimits, RemoteOptions
    from iac_code.remote.serve import run_http_server

    limits = RemoteLimits()
    if args.max_connections is not None:
        limits = replace(limits, max_connections=args.max_connections)
    if args.idle_timeout is not None:
        limits = replace(limits, idle_timeout_seconds=args.idle_timeout)
    options = RemoteOptions(
        host=args.host,
        port=args.port,
        token=os.environ.get(TOKEN_ENV) or None,
        allowed_origins=tuple(args.allow_origin),
        limits=limits,
    )
    return run_http_server(acp_settings(args), options)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "acp" and args.transport == "http":
        return _serve_http(args)
    if args.command == "acp":
        from iac_code.prelude import run_acp

        return run_acp(lambda: acp_settings(args))
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
