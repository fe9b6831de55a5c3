"""``iac-code acp --login`` / ``iac-code login``: ask for the API key on the terminal.

This is what an ACP client runs for the terminal authentication method (the agent's usual
command plus ``--login``, in an interactive terminal): the key is read without echo, checked
with one cheap request against the configured endpoint, stored under ``$IAC_CODE_HOME`` and
the process exits 0. Any failure says why on the terminal and exits 1 with nothing stored.
"""

from __future__ import annotations

import getpass
import os
import sys
from typing import TYPE_CHECKING, TextIO

from iac_code import secret_env
from iac_code.credentials import (
    CHECK_DEADLINE_SECONDS,
    DEFAULT_BASE_URL,
    CredentialError,
    KeyCheckError,
    check_api_key,
    credentials_path,
    remove_api_key,
    store_api_key,
)

if TYPE_CHECKING:
    from iac_code.settings import Settings

PROMPT = "Anthropic API key (input hidden): "


def run_login(settings: Settings, *, out: TextIO | None = None) -> int:
    stream = out or sys.stderr
    endpoint = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
    print(f"iac-code: log in to {endpoint}", file=stream, flush=True)
    try:
        key = getpass.getpass(PROMPT, stream=stream).strip()
    except (EOFError, KeyboardInterrupt):
        print("\nLogin cancelled. Nothing was saved.", file=stream, flush=True)
        return 1
    if not key:
        print("No key entered. Nothing was saved.", file=stream, flush=True)
        return 1
    print("Checking the key ...", file=stream, flush=True)
    try:
        check_api_key(key, settings.base_url, deadline=_check_deadline())
    except (KeyCheckError, CredentialError) as exc:
        print(
            f"{exc} Nothing was saved." if isinstance(exc, CredentialError) else str(exc),
            file=stream,
            flush=True,
        )
        return 1
    try:
        path = store_api_key(settings.home, key)
    except OSError as exc:
        print(f"Could not save the key: {exc.strerror or exc}", file=stream, flush=True)
        return 1
    print(f"Logged in. The key is saved in {path} (readable by you only).", file=stream)
    if secret_env.get("ANTHROPIC_API_KEY"):
        print(
            "Note: ANTHROPIC_API_KEY is set in this environment; where it is set, it is used"
            " instead of the saved key.",
            file=stream,
        )
    stream.flush()
    return 0


def _check_deadline() -> float:
    """The key check's overall deadline: IAC_CODE_LOGIN_DEADLINE_SECONDS, or the default."""
    raw = os.environ.get("IAC_CODE_LOGIN_DEADLINE_SECONDS", "")
    try:
        value = float(raw)
    except ValueError:
        return CHECK_DEADLINE_SECONDS
    return value if value > 0 else CHECK_DEADLINE_SECONDS


def run_logout(settings: Settings, *, out: TextIO | None = None) -> int:
    stream = out or sys.stderr
    path = credentials_path(settings.home)
    try:
        removed = remove_api_key(settings.home)
    except OSError as exc:
        print(f"Could not remove {path}: {exc.strerror or exc}.", file=stream, flush=True)
        return 1
    if removed:
        print(f"Logged out: removed {path}.", file=stream)
    else:
        print("Not logged in: there was no saved key.", file=stream)
    stream.flush()
    return 0
