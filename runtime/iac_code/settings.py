"""Runtime configuration: command-line flags over environment over ``config.toml``.

Standard library only, so the start-up fast path can read it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from iac_code import secret_env
from iac_code.settings_core import (
    DEFAULT_MAX_OPEN_SESSIONS,
    DEFAULT_MODEL,
    DEFAULT_MODEL_NOTICE_AFTER,
    DEFAULT_MODEL_TIMEOUT,
    DEFAULT_MODELS,
    check_environment,
    configured_store_url,
    home_path,
    model_choices,
    read_config,
)

DEFAULT_MAX_LINE_BYTES = 64 * 2**20
DEFAULT_MAX_OUTPUT_BACKLOG_BYTES = 16 * 2**20
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
DEFAULT_LOG_LEVEL = "WARNING"

ENVIRONMENT_VARIABLES = {
    "ANTHROPIC_API_KEY": "API key for the Anthropic Messages API (needed for prompts only)",
    "ANTHROPIC_BASE_URL": "base URL of any Anthropic-compatible endpoint",
    "IAC_CODE_MODEL": f"default model (default {DEFAULT_MODEL})",
    "IAC_CODE_HOME": "state folder replacing ~/.iac-code (sessions in $IAC_CODE_HOME/sessions)",
    "IAC_CODE_LOG_LEVEL": "log level for stderr and the log file (default WARNING)",
    "IAC_CODE_STORE_URL": "session store: a postgresql:// URL (default: JSONL files under the"
    " state folder; needs the postgres extra)",
    "IAC_CODE_STORE_LEASE_SECONDS": "seconds a database store's session lease lasts without"
    " renewal, i.e. how soon another process may take over a dead one's session (default 15)",
    "IAC_CODE_CHILD_ENV_ALLOW": "comma-separated variables passed to bash/MCP children even"
    " though they are credentials (ANTHROPIC_* and IAC_CODE_* secrets are withheld otherwise)",
}


@dataclass(frozen=True)
class Settings:
    home: Path
    api_key: str | None = None
    base_url: str | None = None
    model: str = DEFAULT_MODEL
    models: tuple[str, ...] = DEFAULT_MODELS
    log_level: str = "WARNING"
    log_file: Path | None = None
    #: "text" or "json" (JSON lines with trace_id/span_id, ``--log-format json``).
    log_format: str = "text"
    #: Record prompt text and tool arguments/results on spans (``--otel-content``).
    otel_content: bool = False
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    #: Output not yet read by the client beyond which stdin is no longer read (backpressure).
    max_output_backlog_bytes: int = DEFAULT_MAX_OUTPUT_BACKLOG_BYTES
    max_turn_requests: int = 50
    #: Sessions one connection may have open at once (session/new, load, resume, fork).
    max_open_sessions: int = DEFAULT_MAX_OPEN_SESSIONS
    max_tokens: int = 16_000
    context_window: int = 200_000
    #: First backoff wait (seconds) before retrying a transient model failure; later waits
    #: double. Tests and offline demos set it near zero to keep retries instant.
    retry_base_delay: float = 1.0
    #: Seconds the model may send nothing before the turn ends with an error.
    model_timeout: float = DEFAULT_MODEL_TIMEOUT
    #: Seconds the model may send nothing before the user is told the agent still waits.
    model_notice_after: float = DEFAULT_MODEL_NOTICE_AFTER
    #: Names/patterns passed to child processes although they look like the agent's secrets.
    child_env_allow: tuple[str, ...] = ()
    #: Names/patterns withheld from child processes besides the built-in ones (child_env).
    secret_env: tuple[str, ...] = ()
    #: Where sessions are kept: None for the JSONL files under ``home``, else a
    #: ``postgresql://`` URL (``--store``, IAC_CODE_STORE_URL, config ``store``).
    store_url: str | None = None
    #: Seconds a database store's session lease lasts without renewal.
    store_lease_seconds: float = 15.0
    #: Why the configured log level was not used (logged at start), if it was not.
    log_level_warning: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def sessions_dir(self) -> Path:
        return self.home / "sessions"

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def default_home(env: Mapping[str, str] | None = None) -> Path:
    return Path(home_path(os.environ if env is None else env))


def _read_config_file(home: Path) -> dict[str, Any]:
    return read_config(str(home))


def load_settings(env: dict[str, str] | None = None, *, home: Path | None = None) -> Settings:
    """Settings from ``config.toml`` overridden by the environment (flags are applied later).

    ``home`` (the ``--home`` flag) replaces the environment's state folder, config file
    included. A value that cannot be used raises :class:`~iac_code.settings_core.SettingsError`.
    """
    # What the process was started with: its credentials are no longer in os.environ.
    env = secret_env.environment() if env is None else dict(env)
    check_environment(env)
    home = default_home(env) if home is None else home
    config = _read_config_file(home)
    model, models = model_choices(env, config)
    log_file = config.get("log_file")
    log_level, log_level_warning = _log_level(env, config)
    return Settings(
        home=home,
        api_key=env.get("ANTHROPIC_API_KEY") or config.get("api_key") or None,
        base_url=env.get("ANTHROPIC_BASE_URL") or config.get("base_url") or None,
        model=model,
        models=models,
        log_level=log_level,
        log_level_warning=log_level_warning,
        log_file=Path(log_file).expanduser() if log_file else None,
        max_turn_requests=int(config.get("max_turn_requests", 50)),
        max_open_sessions=int(config.get("max_open_sessions", DEFAULT_MAX_OPEN_SESSIONS)),
        max_output_backlog_bytes=int(
            float(config.get("max_output_backlog_mib", DEFAULT_MAX_OUTPUT_BACKLOG_BYTES / 2**20))
            * 2**20
        ),
        max_tokens=int(config.get("max_tokens", 16_000)),
        retry_base_delay=float(config.get("retry_base_delay", 1.0)),
        model_timeout=float(config.get("model_timeout", DEFAULT_MODEL_TIMEOUT)),
        model_notice_after=float(config.get("model_notice_after", DEFAULT_MODEL_NOTICE_AFTER)),
        child_env_allow=(
            *_names(config.get("child_env_allow")),
            *_names(env.get("IAC_CODE_CHILD_ENV_ALLOW")),
        ),
        secret_env=_names(config.get("secret_env")),
        store_url=configured_store_url(env, config),
        store_lease_seconds=float(
            env.get("IAC_CODE_STORE_LEASE_SECONDS") or config.get("store_lease_seconds", 15.0)
        ),
    )


def _log_level(env: Mapping[str, str], config: Mapping[str, Any]) -> tuple[str, str | None]:
    """The log level from the environment or the config file, and a warning when the value
    is not a level. An editor starts the agent with whatever environment it has, so a typo
    there must not stop the agent; it is said on stderr and the default is used."""
    source, raw = "IAC_CODE_LOG_LEVEL", env.get("IAC_CODE_LOG_LEVEL")
    if not raw:
        source, raw = "log_level in config.toml", config.get("log_level")
    if not raw:
        return DEFAULT_LOG_LEVEL, None
    level = str(raw).strip().upper()
    if level in LOG_LEVELS:
        return level, None
    return (
        DEFAULT_LOG_LEVEL,
        f"{source}={raw!r} is not one of {', '.join(LOG_LEVELS)}; using {DEFAULT_LOG_LEVEL}",
    )


def _names(value: Any) -> tuple[str, ...]:
    """A list of names, or one comma/space separated string of them, as a tuple."""
    if not value:
        return ()
    items = value.replace(",", " ").split() if isinstance(value, str) else value
    return tuple(str(item).strip() for item in items if str(item).strip())
