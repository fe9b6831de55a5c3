"""``iac-code acp --login`` / ``iac-code login``: ask for the API key on the terminal.

This is what an ACP client runs for the terminal authentication method (the agent's usual
command plus ``--login``, in an interactive terminal): the key is read without echo, checked
with one cheap request against the configured endpoint, stored under ``$IAC_CODE_HOME`` and
the process exits 0. Any failure says why on the terminal and exits 1 with nothing stored.
"""

from __future__ import annotations

import getpass
import sys
from typing import TYPE_CHECKING, TextIO

from iac_code import secret_env
from iac_code.credentials import (
    DEFAULT_BASE_URL,
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
        check_api_key(key, settings.base_url)
    except KeyCheckError as exc:
        print(str(exc), file=stream, flush=True)
        return 1
    try:
        path = store_api_key(settings.home, key)
    except OSError as exc:
        print(f"Could not save the key: {exc}", file=stream, flush=True)
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


def run_logout(settings: Settings, *, out: TextIO | None = None) -> int:
    stream = out or sys.stderr
    if remove_api_key(settings.home):
        print(f"Logged out: removed {credentials_path(settings.home)}.", file=stream)
    else:
        print("Not logged in: there was no saved key.", file=stream)
    stream.flush()
    return 0
