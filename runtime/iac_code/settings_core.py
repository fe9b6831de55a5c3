"""The parts of the configuration the start-up fast path needs, without ``dataclasses`` or
``pathlib`` (importing those costs more than the whole ``initialize`` answer).

:mod:`iac_code.settings` builds the full ``Settings`` from these same functions, so the fast
path's ``session/new`` answer and the runtime's cannot disagree on the model list.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported on the start-up path (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

DEFAULT_MODEL = "claude-sonnet-4-6"
#: Models offered in the ``model`` config option; IAC_CODE_MODEL is added when not listed.
DEFAULT_MODELS = ("claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5")
DEFAULT_MAX_OPEN_SESSIONS = 2_000
#: Seconds without a byte from the model before the turn ends with an error.
DEFAULT_MODEL_TIMEOUT = 120.0
#: Seconds without a byte from the model before the user is told the agent is waiting.
DEFAULT_MODEL_NOTICE_AFTER = 10.0


class SettingsError(ValueError):
    """A configuration value iac-code cannot use. Its text is the whole message the user sees
    (one line, naming where the value came from, the key and what it must be)."""


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_text_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_names(value: object) -> bool:
    return isinstance(value, str) or _is_text_list(value)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _is_number(value: object) -> bool:
    # bool is an int: ``max_tokens = true`` is a mistake, not 1
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _is_positive(value: object) -> bool:
    return _is_number(value) and 0 < value < float("inf")  # type: ignore[operator]


def _is_non_negative(value: object) -> bool:
    return _is_number(value) and 0 <= value < float("inf")  # type: ignore[operator]


#: Every key ``config.toml`` may hold: what its value must be (said in errors) and the test.
CONFIG_KEYS: dict[str, tuple[str, Callable[[object], bool]]] = {
    "model": ("a string", _is_text),
    "models": ("a list of strings", _is_text_list),
    "api_key": ("a string", _is_text),
    "base_url": ("an http(s) URL string", _is_text),
    "log_level": ("a string (DEBUG, INFO, WARNING or ERROR)", _is_text),
    "log_file": ("a string (a file path)", _is_text),
    "max_turn_requests": ("a whole number of at least 1", _is_count),
    "max_open_sessions": ("a whole number of at least 1", _is_count),
    "max_tokens": ("a whole number of at least 1", _is_count),
    "max_output_backlog_mib": ("a positive number", _is_positive),
    "retry_base_delay": ("a number of seconds, 0 or more", _is_non_negative),
    "model_timeout": ("a positive number of seconds", _is_positive),
    "model_notice_after": ("a positive number of seconds", _is_positive),
    "child_env_allow": ("a string or a list of strings", _is_names),
    "secret_env": ("a string or a list of strings", _is_names),
    "store": ("a postgresql:// URL string", _is_text),
    "store_lease_seconds": ("a positive number of seconds", _is_positive),
}


def home_path(env: Mapping[str, str]) -> str:
    """``$IAC_CODE_HOME`` (user-expanded), else ``~/.iac-code``."""
    configured = env.get("IAC_CODE_HOME")
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(os.path.expanduser("~"), ".iac-code")


#: ``config.toml`` as last read, by path: (os.stat identity, contents). The start-up check,
#: the fast path's session defaults and the full settings all read the file; it is parsed once.
_read_cache: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def config_path(home: str) -> str:
    return os.path.join(home, "config.toml")


def read_config(home: str) -> dict[str, Any]:
    """``config.toml`` of ``home`` ({} without one), every known key's value checked.

    Raises :class:`SettingsError` (one line naming the file) when it cannot be read, is not
    UTF-8, is not TOML, or holds a value of the wrong type. Unknown keys are left in; see
    :func:`unknown_key_warnings`."""
    path = config_path(home)
    try:
        status = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        # No config there; a home that cannot hold one is the session store's to report.
        return {}
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    identity = (status.st_ino, status.st_size, status.st_mtime_ns)
    cached = _read_cache.get(path)
    if cached is not None and cached[0] == identity:
        return cached[1]
    config = _parse_config(path)
    for key, value in config.items():
        known = CONFIG_KEYS.get(key)
        if known is not None and not known[1](value):
            raise SettingsError(f"{path}: {key} must be {known[0]}, not {_shown(value)}")
    problem = url_problem(config["base_url"]) if "base_url" in config else None
    if problem:
        raise SettingsError(f"{path}: base_url {problem}")
    problem = store_url_problem(config["store"]) if "store" in config else None
    if problem:
        raise SettingsError(f"{path}: store {problem}")
    _read_cache[path] = (identity, config)
    return config


def _parse_config(path: str) -> dict[str, Any]:
    import tomllib  # only when there is a file: its import is a few ms of start-up

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SettingsError(
            f"{path} is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line});"
            " save it as UTF-8"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML: {exc}") from None


def _shown(value: object) -> str:
    """A value as a message quotes it: its repr (shortened) and its TOML type."""
    kinds = {bool: "true/false", int: "a whole number", float: "a number", str: "a string"}
    kind = kinds.get(type(value), "a list" if isinstance(value, list) else "a table")
    text = ("true" if value else "false") if isinstance(value, bool) else repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({kind})"


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a model endpoint's base URL (a sentence part), or None."""
    from urllib.parse import urlsplit

    example = "like https://api.anthropic.com"
    if url != url.strip() or any(char.isspace() for char in url):
        return f"{url!r} contains spaces; it must be a URL {example}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc}); it must be a URL {example}"
    if parts.scheme not in ("http", "https"):
        return f"{url!r} does not start with http:// or https://; it must be a URL {example}"
    if not parts.hostname:
        return f"{url!r} has no host name; it must be a URL {example}"
    if port == 0:
        return f"{url!r} has port 0; it must be a URL {example}"
    if parts.query or parts.fragment:
        return f"{url!r} has a query or fragment (? or #), which the endpoint path cannot carry"
    return None


STORE_URL_SCHEMES = ("postgresql", "postgres")


def store_url_problem(url: str) -> str | None:
    """Why ``url`` cannot name a session store (a sentence part), or None. Only the scheme
    is quoted back: the rest may hold a password."""
    scheme, separator, _ = url.partition("://")
    example = "like postgresql://user@host/dbname"
    if not separator or scheme.lower() not in STORE_URL_SCHEMES:
        shown = f"{scheme}://..." if separator else "this value"
        return f"must be a postgresql:// URL {example}, not {shown}"
    if url != url.strip() or any(char.isspace() for char in url):
        return f"contains spaces; it must be a URL {example}"
    return None


def unknown_key_warnings(home: str) -> list[str]:
    """One line per key of ``config.toml`` that iac-code does not know (it is ignored),
    naming the closest known key."""
    config = read_config(home)
    unknown = [key for key in config if key not in CONFIG_KEYS]
    if not unknown:
        return []
    import difflib

    path = config_path(home)
    lines = []
    for key in unknown:
        close = difflib.get_close_matches(key, CONFIG_KEYS, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(CONFIG_KEYS)
        lines.append(f"{path}: unknown key {key!r} is ignored ({hint})")
    return lines


def check_environment(env: Mapping[str, str]) -> None:
    """Raise :class:`SettingsError` for an environment variable iac-code cannot use."""
    base_url = env.get("ANTHROPIC_BASE_URL")
    problem = url_problem(base_url) if base_url else None
    if problem:
        raise SettingsError(f"environment variable ANTHROPIC_BASE_URL {problem}")
    store = env.get("IAC_CODE_STORE_URL")
    problem = store_url_problem(store) if store else None
    if problem:
        raise SettingsError(f"environment variable IAC_CODE_STORE_URL {problem}")
    lease = env.get("IAC_CODE_STORE_LEASE_SECONDS")
    if lease and not _is_positive(_float_or_none(lease)):
        raise SettingsError(
            "environment variable IAC_CODE_STORE_LEASE_SECONDS must be a positive number of"
            f" seconds, not {lease!r}"
        )
    # Read by the search tools (iac_code.tools.contract); a typo would pass unnoticed there.
    seconds = env.get("IAC_CODE_SEARCH_TIMEOUT_S")
    if seconds:
        try:
            valid = _is_positive(float(seconds))
        except ValueError:
            valid = False
        if not valid:
            raise SettingsError(
                "environment variable IAC_CODE_SEARCH_TIMEOUT_S must be a positive number of"
                f" seconds, not {seconds!r}"
            )


def _float_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def check_start(env: Mapping[str, str], home: str | None = None) -> list[str]:
    """Everything about the configuration that can be judged before answering anything.

    Raises :class:`SettingsError` for a value that cannot be used; returns warnings (unknown
    config keys) to show once."""
    check_environment(env)
    return unknown_key_warnings(home_path(env) if home is None else home)


def model_choices(env: Mapping[str, str], config: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The default model and the models offered (the default always among them)."""
    model = env.get("IAC_CODE_MODEL") or str(config.get("model") or DEFAULT_MODEL)
    models = tuple(config.get("models") or DEFAULT_MODELS)
    if model not in models:
        models = (model, *models)
    return model, models


class SessionDefaults:
    """What a new session needs before the full settings are loaded."""

    __slots__ = ("max_open_sessions", "model", "models", "sessions_dir", "store_url")

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        source = os.environ if env is None else env
        home = home_path(source)
        config = read_config(home)
        self.model, self.models = model_choices(source, config)
        self.sessions_dir = os.path.join(home, "sessions")
        self.max_open_sessions = int(config.get("max_open_sessions", DEFAULT_MAX_OPEN_SESSIONS))
        #: A configured database store: the fast path, which writes the JSONL layout itself,
        #: must then leave session/new to the runtime.
        if env is None:
            from iac_code import secret_env  # the URL may be hidden as a secret

            source = secret_env.environment()
        self.store_url: str | None = configured_store_url(source, config)


def configured_store_url(env: Mapping[str, str], config: Mapping[str, Any]) -> str | None:
    """``IAC_CODE_STORE_URL``, else the config file's ``store``; None means the JSONL files."""
    return env.get("IAC_CODE_STORE_URL") or config.get("store") or None
