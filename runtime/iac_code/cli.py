"""The ``iac-code`` command line.

``iac-code acp`` is what editors start; it must reach the ``initialize`` answer quickly, so
this module imports only the standard library and the start-up fast path.
"""

from __future__ import annotations

import sys

from iac_code import __version__

TYPE_CHECKING = False  # not imported from typing: start-up cost (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

if TYPE_CHECKING:
    import argparse

    from iac_code.remote.options import RemoteLimits
    from iac_code.settings import Settings


def _env_help() -> str:
    from iac_code.settings import ENVIRONMENT_VARIABLES
    from iac_code.settings_core import CONFIG_KEYS

    width = max(len(name) for name in ENVIRONMENT_VARIABLES)
    lines = [f"  {name.ljust(width)}  {text}" for name, text in ENVIRONMENT_VARIABLES.items()]
    return (
        "environment variables:\n"
        + "\n".join(lines)
        + "\n\nOptional config file: $IAC_CODE_HOME/config.toml (keys: "
        + ", ".join(CONFIG_KEYS)
        + "). Flags override the environment, which overrides the config file."
    )


def _parser_class() -> type[argparse.ArgumentParser]:
    import argparse

    class _Parser(argparse.ArgumentParser):
        """Usage errors as one line on stderr and exit status 2 (editors show one line well)."""

        def error(self, message: str) -> NoReturn:
            self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    return _Parser


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def _positive_number(text: str) -> float:
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be a positive number")
    return value


def _port(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port number (0 to 65535)")
    return value


def _base_url(text: str) -> str:
    import argparse

    from iac_code.settings_core import url_problem

    problem = url_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _store_url(text: str) -> str:
    import argparse

    from iac_code.settings_core import store_url_problem

    problem = store_url_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _log_level(text: str) -> str:
    import argparse

    from iac_code.settings import LOG_LEVELS

    level = text.upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(LOG_LEVELS)}")
    return level


def build_parser() -> argparse.ArgumentParser:
    import argparse
    from pathlib import Path

    parser = _parser_class()(
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
    acp.add_argument(
        "--base-url", type=_base_url, help="Anthropic-compatible endpoint (env ANTHROPIC_BASE_URL)"
    )
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
        "--log-format",
        choices=("text", "json"),
        help="text (default) or json: one JSON object per line, with trace_id/span_id",
    )
    acp.add_argument(
        "--otel-content",
        action="store_true",
        default=None,
        help="with OpenTelemetry on (OTEL_EXPORTER_OTLP_ENDPOINT), also record prompt text and"
        " tool arguments/results on spans",
    )
    account = acp.add_mutually_exclusive_group()
    account.add_argument(
        "--login",
        action="store_true",
        help="ask for the API key on this terminal, check it with the endpoint, save it in"
        " $IAC_CODE_HOME and exit (what ACP terminal authentication runs)",
    )
    account.add_argument("--logout", action="store_true", help="remove the saved API key and exit")
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
        "--model-timeout",
        type=_positive_number,
        metavar="SECONDS",
        help="end a prompt turn with an error when the model sends nothing for this long"
        " (default 120; config model_timeout)",
    )
    acp.add_argument(
        "--store",
        type=_store_url,
        metavar="URL",
        help="keep sessions in this PostgreSQL database (postgresql://...; needs the postgres"
        " extra) instead of JSONL files under the state folder (env IAC_CODE_STORE_URL,"
        " config store)",
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
    remote.add_argument(
        "--port", type=_port, default=8765, help="port to listen on (8765; 0 = any)"
    )
    remote.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="browser Origin allowed besides loopback ones (repeatable)",
    )
    remote.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="Host header name accepted besides localhost/127.0.0.1/[::1] when listening on"
        " loopback (repeatable; others get 421, against DNS rebinding)",
    )
    remote.add_argument(
        "--auth",
        nargs="+",
        metavar="KIND",
        help="who may call, each a principal owning its sessions: 'tokens FILE' (one"
        " 'TOKEN PRINCIPAL' pair per line) or 'jwt' (OIDC bearer tokens, see --jwt-*)",
    )
    remote.add_argument("--jwt-jwks-url", metavar="URL", help="the identity provider's JWKS")
    remote.add_argument("--jwt-issuer", metavar="ISS", help="the tokens' required 'iss'")
    remote.add_argument("--jwt-audience", metavar="AUD", help="the tokens' required 'aud'")
    remote.add_argument(
        "--jwt-principal-claim", default="sub", metavar="CLAIM", help="principal claim (sub)"
    )
    remote.add_argument(
        "--drain-timeout",
        type=_positive_number,
        metavar="SECONDS",
        help="after SIGTERM, running turns may finish this long before they are cancelled (30)",
    )
    remote.add_argument(
        "--workspace-root",
        metavar="DIR",
        help="confine each principal's session directories to DIR/<principal>",
    )
    remote.add_argument(
        "--ws-compression",
        action="store_true",
        help="agree to compress WebSocket frames when a client offers it (off: on loopback it"
        " costs more than it saves)",
    )
    remote.add_argument(
        "--max-connections", type=_positive_int, help="live connections (default 256)"
    )
    remote.add_argument(
        "--idle-timeout",
        type=_positive_number,
        help="seconds before an unused connection closes (600)",
    )
    remote.add_argument(
        "--body-timeout",
        type=_positive_number,
        metavar="SECONDS",
        help="a POST body must arrive within this time, else 408 and the connection closes (30)",
    )
    remote.add_argument(
        "--max-body-buffer-mib",
        type=_positive_number,
        metavar="MIB",
        help="POST bodies being received by all connections together; a request that would"
        " go past it gets 503 with Retry-After (64)",
    )

    for name, text in (
        ("login", "ask for the API key on this terminal, check it and save it"),
        ("logout", "remove the saved API key"),
    ):
        command = commands.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        command.add_argument("--home", type=Path, help="state folder (env IAC_CODE_HOME)")
        if name == "login":
            command.add_argument(
                "--base-url", type=_base_url, help="endpoint to check the key with"
            )

    return parser


def _account_settings(args: argparse.Namespace) -> Settings:
    from iac_code.settings import load_settings

    settings = load_settings(home=args.home)
    return settings.with_overrides(base_url=getattr(args, "base_url", None))


def acp_settings(args: argparse.Namespace) -> Settings:
    """Settings for ``iac-code acp``: config file, then environment, then flags."""
    from dataclasses import replace

    from iac_code.settings import load_settings

    settings = load_settings(home=args.home)
    settings = settings.with_overrides(
        model=args.model,
        model_timeout=args.model_timeout,
        base_url=args.base_url,
        log_level=args.log_level,
        log_file=args.log_file,
        log_format=args.log_format,
        otel_content=args.otel_content,
        max_line_bytes=args.max_line_bytes,
        max_turn_requests=args.max_turn_requests,
        max_open_sessions=args.max_open_sessions,
        store_url=args.store,
    )
    if args.log_level is not None:  # the flag wins: a bad level elsewhere no longer matters
        settings = replace(settings, log_level_warning=None)
    if args.child_env_allow:
        allowed = (*settings.child_env_allow, *args.child_env_allow)
        settings = settings.with_overrides(child_env_allow=allowed)
    if settings.model not in settings.models:
        settings = settings.with_overrides(models=(settings.model, *settings.models))
    if settings.store_url:
        from iac_code.store.open_store import check_store_extra

        check_store_extra()
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
        f" add it to this installation with: {_http_extra_install_command()}"
    )


def _http_extra_install_command() -> str:
    """A command that installs the extra into the environment running this agent, wherever
    it came from (pipx, uv tool, a venv) and from any folder: the agent does not know where
    its checkout is, but it knows its own interpreter and the extra's requirements."""
    import importlib.util
    import shlex

    requirements = " ".join(shlex.quote(r) for r in _http_extra_requirements())
    python = shlex.quote(sys.executable)
    if importlib.util.find_spec("pip") is not None:
        return f"{python} -m pip install {requirements}"
    # Environments made by uv (uv tool install, uv venv) have no pip, and their owner has uv.
    return f"uv pip install --python {python} {requirements}"


def _http_extra_requirements() -> list[str]:
    """The ``http`` extra's requirements as this installation's metadata declares them (the
    names alone where there is none, as in a development checkout)."""
    import importlib.metadata
    import re

    try:
        declared = importlib.metadata.requires("iac-code-acp") or []
    except importlib.metadata.PackageNotFoundError:
        declared = []
    found = []
    for requirement in declared:
        spec, _, marker = requirement.partition(";")
        if re.search(r"""extra\s*==\s*["']http["']""", marker):
            found.append(spec.strip().replace(" ", ""))
    return found or list(HTTP_EXTRA_MODULES)


def _serve_http(args: argparse.Namespace, settings: Callable[[], Settings]) -> int:
    from iac_code import secret_env

    problem = _missing_http_extra()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2

    from iac_code.remote.auth_options import (
        AuthConfigError,
        authenticator_from_args,
        workspace_root,
    )
    from iac_code.remote.options import TOKEN_ENV, RemoteOptions
    from iac_code.remote.serve import run_http_server

    try:
        authenticator = authenticator_from_args(args)
        root = workspace_root(args)
    except AuthConfigError as exc:
        print(f"iac-code: {exc}", file=sys.stderr)
        return 2
    options = RemoteOptions(
        host=args.host,
        port=args.port,
        token=secret_env.get(TOKEN_ENV) or None,
        authenticator=authenticator,
        workspace_root=root,
        allowed_origins=tuple(args.allow_origin),
        allowed_hosts=tuple(args.allow_host),
        websocket_compression=args.ws_compression,
        limits=remote_limits(args),
    )
    return run_http_server(settings(), options)


def remote_limits(args: argparse.Namespace) -> RemoteLimits:
    """The remote transport's limits: the defaults with the flags given."""
    from dataclasses import replace

    from iac_code.remote.options import RemoteLimits

    limits = RemoteLimits()
    if args.max_connections is not None:
        limits = replace(limits, max_connections=args.max_connections)
    if args.idle_timeout is not None:
        limits = replace(limits, idle_timeout_seconds=args.idle_timeout)
    if args.body_timeout is not None:
        limits = replace(limits, body_timeout_seconds=args.body_timeout)
    if args.drain_timeout is not None:
        limits = replace(limits, drain_timeout_seconds=args.drain_timeout)
    if args.max_body_buffer_mib is not None:
        limits = replace(limits, max_buffered_body_bytes=int(args.max_body_buffer_mib * 2**20))
    return limits


def _plain_acp_arguments() -> argparse.Namespace:
    """What ``build_parser().parse_args(["acp"])`` gives, without importing argparse (a test
    keeps the two equal)."""
    from types import SimpleNamespace

    values: dict[str, object] = {
        name: None
        for name in (
            "model",
            "base_url",
            "home",
            "log_level",
            "log_file",
            "log_format",
            "otel_content",
            "max_line_bytes",
            "max_turn_requests",
            "max_open_sessions",
            "store",
            "model_timeout",
            "child_env_allow",
            "max_connections",
            "idle_timeout",
            "body_timeout",
            "max_body_buffer_mib",
            "auth",
            "jwt_jwks_url",
            "jwt_issuer",
            "jwt_audience",
            "workspace_root",
            "drain_timeout",
        )
    }
    values.update(
        command="acp",
        login=False,
        logout=False,
        transport="stdio",
        host="127.0.0.1",
        port=8765,
        allow_origin=[],
        allow_host=[],
        ws_compression=False,
        jwt_principal_claim="sub",
    )
    return SimpleNamespace(**values)  # type: ignore[return-value]


def _hiding_secrets(settings: Settings) -> Settings:
    """``settings`` after the variables its ``secret_env`` names left os.environ too."""
    from iac_code import secret_env

    if settings.secret_env:
        secret_env.hide(settings.secret_env)
    return settings


#: Said on stderr when ``iac-code acp`` is started by hand in a terminal.
TERMINAL_NOTICE = (
    "iac-code acp speaks the Agent Client Protocol (JSON-RPC 2.0, one message per line) on"
    " stdin/stdout for an editor, not a chat; to see it work, run"
    " `acp-conformance run --profile iac-code --llm anthropic -- iac-code acp`, or add"
    " `iac-code acp` to an ACP editor (README: Using the agent from an editor). Ctrl-D quits."
)


def _check_start(home: object = None) -> None:
    """Judge the environment and ``config.toml`` before anything is answered: a value that
    cannot be used raises SettingsError (one line, exit 2); unknown keys are said once."""
    from iac_code import secret_env
    from iac_code.settings_core import check_start

    for warning in check_start(secret_env.environment(), None if home is None else str(home)):
        print(f"iac-code: warning: {warning}", file=sys.stderr)


def _say_what_this_is() -> None:
    """A person who runs ``iac-code acp`` in a terminal would otherwise see nothing, and a
    JSON parse error for whatever they type."""
    try:
        on_terminal = sys.stdin.isatty()
    except (AttributeError, ValueError):  # no stdin, or a closed one
        return
    if on_terminal:
        print(TERMINAL_NOTICE, file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """The ``iac-code`` command. As the process's entry point (``argv`` None) it first takes
    the agent's credentials out of its own environment (:mod:`iac_code.secret_env`); a call
    with explicit arguments leaves the caller's environment alone.

    A configuration value that cannot be used (config file, environment or flag) is one line
    on stderr and exit status 2."""
    from iac_code.settings_core import SettingsError

    try:
        return _main(argv)
    except SettingsError as exc:
        print(f"iac-code: {exc}", file=sys.stderr)
        return 2


def _main(argv: list[str] | None) -> int:
    entry_point = argv is None
    if entry_point:
        from iac_code import secret_env

        secret_env.hide()
    arguments = sys.argv[1:] if argv is None else argv

    def settings_for(args: argparse.Namespace) -> Callable[[], Settings]:
        if entry_point:
            return lambda: _hiding_secrets(acp_settings(args))
        return lambda: acp_settings(args)

    if arguments == ["acp"]:
        # What editors run: answer initialize before even argparse is imported (the
        # arguments are parsed, the same way as always, once the answer is on its way).
        from iac_code.prelude import run_acp
        from iac_code.settings_core import SessionDefaults

        _check_start()
        _say_what_this_is()
        return run_acp(settings_for(_plain_acp_arguments()), session_defaults=SessionDefaults)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "login" or (args.command == "acp" and args.login):
        from iac_code.login import run_login

        return run_login(_account_settings(args))
    if args.command == "logout" or (args.command == "acp" and args.logout):
        from iac_code.login import run_logout

        return run_logout(_account_settings(args))
    if args.command == "acp":
        _check_start(args.home)
    if args.command == "acp" and args.transport == "http":
        return _serve_http(args, settings_for(args))
    if args.command == "acp":
        from iac_code.prelude import run_acp

        _say_what_this_is()
        return run_acp(settings_for(args))
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
