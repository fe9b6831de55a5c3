"""The API key stored by ``iac-code acp --login`` (ACP terminal authentication).

The key lives in ``$IAC_CODE_HOME/credentials.json`` (file 0600, folder 0700), written
atomically. ``ANTHROPIC_API_KEY`` (or ``api_key`` in ``config.toml``) still wins: the stored
key is used only when neither is set. Standard library only: the start-up path and the
login command must not pay for anything else.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

CREDENTIALS_FILE = "credentials.json"
_KEY_FIELD = "anthropicApiKey"
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: The Messages API version header sent with the check.
ANTHROPIC_VERSION = "2023-06-01"


def credentials_path(home: Path) -> Path:
    return home / CREDENTIALS_FILE


def stored_api_key(home: Path) -> str | None:
    """The stored key, or None (no file, unreadable, or not in the expected shape)."""
    try:
        data = json.loads(credentials_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    key = data.get(_KEY_FIELD) if isinstance(data, dict) else None
    return key if isinstance(key, str) and key else None


def store_api_key(home: Path, key: str) -> Path:
    """Write the key atomically, readable by the owner only; returns the file's path."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = credentials_path(home)
    temporary = target.with_name(f".{CREDENTIALS_FILE}.{os.getpid()}.tmp")
    payload = json.dumps({_KEY_FIELD: key}).encode("utf-8")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # also when the file was left behind by an earlier attempt
        os.write(fd, payload)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, target)
    return target


def remove_api_key(home: Path) -> bool:
    """Delete the stored key; False when there was none."""
    try:
        credentials_path(home).unlink()
    except FileNotFoundError:
        return False
    return True


class KeyCheckError(Exception):
    """The key could not be confirmed; the message says why, for the user."""


def check_api_key(key: str, base_url: str | None, *, timeout: float = 15.0) -> None:
    """One cheap request (list one model) that needs a valid key; raises `KeyCheckError`."""
    import urllib.error  # only the login command checks keys: not on the agent's path
    import urllib.request

    root = (base_url or DEFAULT_BASE_URL).rstrip("/")
    url = f"{root}/v1/models?limit=1"
    request = urllib.request.Request(
        url,
        headers={
            "x-api-key": key,
            "anthropic-version": ANTHROPIC_VERSION,
            "accept": "application/json",
        },
        method="GET",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read(65536)
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise KeyCheckError(
                f"The endpoint {root} rejected this API key (HTTP {exc.code}). Nothing was saved."
            ) from None
        raise KeyCheckError(
            f"The endpoint {root} answered HTTP {exc.code} to the key check. Nothing was saved."
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise KeyCheckError(
            f"Could not reach {root} to check the key ({reason}). Nothing was saved."
        ) from None
