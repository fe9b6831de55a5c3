"""The API key stored by ``iac-code acp --login`` (ACP terminal authentication).

The key lives in ``$IAC_CODE_HOME/credentials.json`` (file 0600, folder 0700), written
atomically. ``ANTHROPIC_API_KEY`` (or ``api_key`` in ``config.toml``) still wins: the stored
key is used only when neither is set. Standard library only: the start-up path and the
login command must not pay for anything else.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from iac_code.settings import Settings

CREDENTIALS_FILE = "credentials.json"
_KEY_FIELD = "anthropicApiKey"
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: The Messages API version header sent with the check.
ANTHROPIC_VERSION = "2023-06-01"


#: A credentials file is a few dozen bytes; anything much larger is not ours to read whole.
MAX_CREDENTIALS_BYTES = 64 * 1024
#: How many leading characters of a key a message may show.
PREVIEW_CHARS = 4


class CredentialError(Exception):
    """A key (or its file) that cannot be used. The message says where it came from and
    shows at most the key's first `PREVIEW_CHARS` characters, never the key."""


def credentials_path(home: Path) -> Path:
    return home / CREDENTIALS_FILE


def key_preview(key: str) -> str:
    """At most the first four characters, only while they are plain visible ASCII."""
    shown = ""
    for char in key[:PREVIEW_CHARS]:
        if not _visible(char):
            break
        shown += char
    return f"'{shown}...'" if shown else "(nothing shown)"


def check_key(key: str, source: str) -> str:
    """The key if every character is visible ASCII, else `CredentialError`.

    A key is sent as an HTTP header value: a CR, LF, space, tab or other control (or
    non-ASCII) character either breaks the request or makes the HTTP layer quote the whole
    header in its error. ``source`` names where the key was read (variable, file, input).
    """
    for position, char in enumerate(key):
        if not _visible(char):
            raise CredentialError(
                f"The API key from {source} contains {_describe(char)} at position"
                f" {position + 1} (the key starts {key_preview(key)}); a key is letters,"
                " digits and punctuation only. Fix it and try again."
            )
    return key


def _visible(char: str) -> bool:
    return "!" <= char <= "~"


def _describe(char: str) -> str:
    names = {
        "\r": "a carriage return (CR)",
        "\n": "a line feed (LF)",
        " ": "a space",
        "\t": "a tab",
    }
    return names.get(char, f"the character U+{ord(char):04X}")


def resolve_api_key(settings: Settings) -> str | None:
    """The one credential lookup of every protocol version and transport.

    ``ANTHROPIC_API_KEY`` (or ``api_key`` in ``config.toml``) wins; else the key saved by
    ``iac-code login``. None when neither exists; `CredentialError` when the one that
    would be used is unusable (a stray control character, a credentials file that is not a
    small regular file). Reads a file: call it off the event loop (`resolve_api_key_async`).
    """
    if settings.api_key:
        return check_key(settings.api_key, "ANTHROPIC_API_KEY (or api_key in config.toml)")
    return SAVED_KEYS.read(settings.home)


async def resolve_api_key_async(settings: Settings) -> str | None:
    """`resolve_api_key` with the file read in a worker thread (a FIFO or a slow disk
    there must not hold the event loop, so every other session, up)."""
    if settings.api_key:
        return resolve_api_key(settings)
    import anyio  # the agent's path only: the login command never awaits

    return await anyio.to_thread.run_sync(resolve_api_key, settings, abandon_on_cancel=True)


def stored_api_key(home: Path) -> str | None:
    """The stored key, or None (no file, or not in the expected shape); `CredentialError`
    when the file is not a small regular file or the key has a control character."""
    return SAVED_KEYS.read(home)


class _SavedKeyCache:
    """The saved key, read again only when the file's stat changes (prompts ask often)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[tuple[int, ...], str | CredentialError | None]] = {}

    def read(self, home: Path) -> str | None:
        path = credentials_path(home)
        try:
            info = os.stat(path)  # stat never blocks on a FIFO; open would
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CredentialError(f"Cannot read {path} ({exc.strerror}).") from None
        stamp = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        with self._lock:
            cached = self._entries.get(str(path))
        if cached is None or cached[0] != stamp:
            cached = (stamp, _read_saved_key(path))
            with self._lock:
                self._entries[str(path)] = cached
        outcome = cached[1]
        if isinstance(outcome, CredentialError):
            raise CredentialError(str(outcome))
        return outcome


def _read_saved_key(path: Path) -> str | CredentialError | None:
    """What the file holds: the key, None (damaged or no key field), or why it is unusable."""
    try:
        # O_NONBLOCK: a FIFO put there opens at once instead of waiting for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return CredentialError(f"Cannot read {path} ({exc.strerror}).")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return CredentialError(
                f"{path} is not a regular file; remove it and run `iac-code login` again."
            )
        if info.st_size > MAX_CREDENTIALS_BYTES:
            return CredentialError(
                f"{path} is {info.st_size} bytes, more than a saved key can be"
                f" ({MAX_CREDENTIALS_BYTES}); remove it and run `iac-code login` again."
            )
        raw = os.read(fd, MAX_CREDENTIALS_BYTES + 1)
    except OSError as exc:
        return CredentialError(f"Cannot read {path} ({exc.strerror}).")
    finally:
        os.close(fd)
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError:
        return None
    key = data.get(_KEY_FIELD) if isinstance(data, dict) else None
    if not isinstance(key, str) or not key:
        return None
    try:
        return check_key(key, str(path))
    except CredentialError as exc:
        return exc


SAVED_KEYS = _SavedKeyCache()


def store_api_key(home: Path, key: str) -> Path:
    """Write the key atomically, readable by the owner only; returns the file's path.
    A key with a control character is refused (`CredentialError`) and nothing is written."""
    check_key(key, "the login input")
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


#: The whole check (connect, headers, body) must finish within this many seconds: an
#: endpoint that trickles bytes would otherwise hold the login forever.
CHECK_DEADLINE_SECONDS = 30.0


def check_api_key(
    key: str,
    base_url: str | None,
    *,
    timeout: float = 15.0,
    deadline: float = CHECK_DEADLINE_SECONDS,
) -> None:
    """One cheap request (list one model) that needs a valid key; raises `KeyCheckError`.
    ``timeout`` bounds each connect and read, ``deadline`` the whole check.

    Never follows a redirect (the key would go wherever the endpoint points); any failure of
    the endpoint (a status line that is not HTTP, too many headers, a trickle past the
    deadline) is one short message. No message holds the key.
    """
    check_key(key, "the login input")
    root = (base_url or DEFAULT_BASE_URL).rstrip("/")
    outcome: list[BaseException | None] = []

    def work() -> None:
        try:
            _request_key_check(key, root, timeout)
            outcome.append(None)
        except BaseException as exc:  # handed to the waiting thread, which reports it
            outcome.append(exc)

    worker = threading.Thread(target=work, name="iac-code-key-check", daemon=True)
    worker.start()
    worker.join(deadline)
    if not outcome:
        raise KeyCheckError(
            f"{root} did not finish answering the key check within {deadline:g} s."
            " Nothing was saved."
        )
    if outcome[0] is not None:
        raise _key_check_failure(outcome[0], root, key) from None


def _request_key_check(key: str, root: str, timeout: float) -> None:
    import urllib.request  # only the login command checks keys: not on the agent's path

    request = urllib.request.Request(
        f"{root}/v1/models?limit=1",
        headers={
            "x-api-key": key,
            "anthropic-version": ANTHROPIC_VERSION,
            "accept": "application/json",
        },
        method="GET",
    )

    class RefuseRedirects(urllib.request.HTTPRedirectHandler):
        """A redirect becomes an HTTPError: the key is never sent to a second address."""

        def redirect_request(self, *_args: object, **_kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(RefuseRedirects())
    with opener.open(request, timeout=timeout) as response:
        response.read(65536)


def _key_check_failure(exc: BaseException, root: str, key: str) -> KeyCheckError:
    import http.client
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        if 300 <= exc.code < 400:
            target = _printable(exc.headers.get("Location") or "nowhere") if exc.headers else "?"
            return KeyCheckError(
                f"The endpoint {root} answered HTTP {exc.code}, a redirect to {target}; the key"
                " is never sent to a redirect's address. Set ANTHROPIC_BASE_URL to the address"
                " you trust. Nothing was saved."
            )
        if exc.code in (401, 403):
            return KeyCheckError(
                f"The endpoint {root} rejected this API key (HTTP {exc.code}). Nothing was saved."
            )
        return KeyCheckError(
            f"The endpoint {root} answered HTTP {exc.code} to the key check. Nothing was saved."
        )
    if isinstance(exc, http.client.HTTPException):
        return KeyCheckError(
            f"The endpoint {root} did not answer like an HTTP server"
            f" ({_printable(_redacted(str(exc) or type(exc).__name__, key))}). Nothing was saved."
        )
    if isinstance(exc, urllib.error.URLError | OSError | ValueError):
        reason = getattr(exc, "reason", None) or exc
        return KeyCheckError(
            f"Could not reach {root} to check the key"
            f" ({_printable(_redacted(str(reason), key))}). Nothing was saved."
        )
    return KeyCheckError(
        f"The key check against {root} failed ({type(exc).__name__}). Nothing was saved."
    )


def _redacted(text: str, key: str) -> str:
    return text.replace(key, key_preview(key)) if key else text


def _printable(text: str, limit: int = 200) -> str:
    """Text from the endpoint, safe for a terminal: control characters escaped, length capped."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return shown + ("..." if len(text) > limit else "")
