"""The parts of the configuration the start-up fast path needs, without ``dataclasses`` or
``pathlib`` (importing those costs more than the whole ``initialize`` answer).

:mod:`iac_code.settings` builds the full ``Settings`` from these same functions, so the fast
path's ``session/new`` answer and the runtime's cannot disagree on the model list.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported on the start-up path (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

DEFAULT_MODEL = "claude-sonnet-4-6"
#: Models offered in the ``model`` config option; IAC_CODE_MODEL is added when not listed.
DEFAULT_MODELS = ("claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5")
DEFAULT_MAX_OPEN_SESSIONS = 2_000


def home_path(env: Mapping[str, str]) -> str:
    """``$IAC_CODE_HOME`` (user-expanded), else ``~/.iac-code``."""
    configured = env.get("IAC_CODE_HOME")
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(os.path.expanduser("~"), ".iac-code")


def read_config(home: str) -> dict[str, Any]:
    """``config.toml`` of ``home`` ({} without one); raises SystemExit when unreadable."""
    path = os.path.join(home, "config.toml")
    if not os.path.exists(path):
        return {}
    import tomllib  # only when there is a file: its import is a few ms of start-up

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"iac-code: cannot read {path}: {exc}") from exc


def model_choices(env: Mapping[str, str], config: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The default model and the models offered (the default always among them)."""
    model = env.get("IAC_CODE_MODEL") or str(config.get("model") or DEFAULT_MODEL)
    models = tuple(config.get("models") or DEFAULT_MODELS)
    if model not in models:
        models = (model, *models)
    return model, models


class SessionDefaults:
    """What a new session needs before the full settings are loaded."""

    __slots__ = ("max_open_sessions", "model", "models", "sessions_dir")

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        source = os.environ if env is None else env
        home = home_path(source)
        config = read_config(home)
        self.model, self.models = model_choices(source, config)
        self.sessions_dir = os.path.join(home, "sessions")
        self.max_open_sessions = int(config.get("max_open_sessions", DEFAULT_MAX_OPEN_SESSIONS))
