"""The agent's credentials, kept out of its own environment once it has started.

Every process of the same user can read ``/proc/<agent pid>/environ`` — ``bash`` commands
and MCP servers the agent starts among them (``cat /proc/$PPID/environ``) — so an API key
left in the agent's environment is as good as handed to them. :func:`hide`, called first
thing by the ``iac-code`` command, therefore moves every secret variable out of
``os.environ`` into this module and blanks its value in the process's initial environment
block as well: on Linux ``/proc/PID/environ`` shows that block (the strings the kernel put
on the stack at ``exec``), which ``unsetenv`` does not touch. The block is our own memory,
so its value bytes are overwritten with NULs through ``/proc/self/mem`` (no re-exec: that
would double the start-up time). ``/proc/PID/environ`` then shows ``NAME=`` and nothing
after it.

Secret variables are the ``ANTHROPIC_*``, ``IAC_CODE_*`` and ``IACCODE_*`` variables whose
name says they hold a secret (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``,
``IACCODE_ACP_HTTP_TOKEN``, ``ANTHROPIC_CUSTOM_HEADERS``, ...), plus the names or patterns
given to :func:`hide` (the configuration's ``secret_env``). :mod:`iac_code.child_env`
withholds them from child processes too (with every other ``ANTHROPIC_*`` variable, which
stays in the agent's environment: the model SDK reads settings such as
``ANTHROPIC_BASE_URL`` from there). The agent reads hidden ones with :func:`get` and
:func:`environment`, which see what the process was started with; the SDK gets the custom
headers it would have read (:func:`custom_headers`).

What this does not do: a process that may read the agent's memory (``ptrace``, which Yama's
default ``ptrace_scope=1`` denies to the agent's children) still finds the key there.

Standard library only, and cheap: it runs before the ``initialize`` answer.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported on the start-up path (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Iterable

#: Whole families that belong to the model provider.
PROVIDER_PREFIXES = ("ANTHROPIC_",)
#: Prefixes of the agent's own configuration; a secret-looking name under them is a secret.
OWN_PREFIXES = ("IAC_CODE_", "IACCODE_")
#: Words that make a name under those prefixes a secret (headers may carry credentials).
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "HEADERS")
#: Whole names that are secrets although no word above says so: a session store URL may
#: carry the database password (``postgresql://user:password@host/db``).
SECRET_NAMES = ("IAC_CODE_STORE_URL",)

_held: dict[str, str] = {}


def is_builtin_secret(name: str) -> bool:
    """True for the variables that are always the agent's secrets (see the module doc)."""
    upper = name.upper()
    if upper in SECRET_NAMES:
        return True
    prefixed = upper.startswith(PROVIDER_PREFIXES) or upper.startswith(OWN_PREFIXES)
    return prefixed and any(word in upper for word in SECRET_WORDS)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    if not patterns:
        return False
    from fnmatch import fnmatchcase

    upper = name.upper()
    return any(fnmatchcase(upper, pattern.upper()) for pattern in patterns)


def hide(extra: Iterable[str] = ()) -> list[str]:
    """Move the secret variables (and those matching ``extra``) out of ``os.environ`` and
    blank them in the initial environment block; returns the names hidden now.

    Call it from the process's entry point only, before any thread or child starts.
    """
    patterns = tuple(extra)
    names = [name for name in os.environ if is_builtin_secret(name) or _matches(name, patterns)]
    for name in names:
        _held[name] = os.environ.pop(name)  # os.environ.pop unsets it for C code too
    if names:
        _blank_initial_block({name.encode() for name in names})
    return names


def get(name: str) -> str | None:
    """A variable as the process was started with it (hidden or not)."""
    value = os.environ.get(name)
    return value if value is not None else _held.get(name)


def environment() -> dict[str, str]:
    """The environment the process was started with: ``os.environ`` plus what was hidden."""
    return {**_held, **os.environ}


def custom_headers() -> dict[str, str]:
    """The hidden ``ANTHROPIC_CUSTOM_HEADERS`` ("Name: value" lines) as the SDK would read
    them; {} when the variable is not hidden (then the SDK reads it itself)."""
    text = _held.get("ANTHROPIC_CUSTOM_HEADERS")
    if text is None or "ANTHROPIC_CUSTOM_HEADERS" in os.environ:
        return {}
    headers: dict[str, str] = {}
    for line in text.split("\n"):
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip()] = value.strip()
    return headers


def _initial_block_range() -> tuple[int, int] | None:
    """``(env_start, env_end)`` of this process (fields 50 and 51 of ``/proc/self/stat``)."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        fields = stat.rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])
    except (OSError, IndexError, ValueError):
        return None
    return (start, end) if 0 < start < end else None


def _blank_initial_block(names: set[bytes]) -> bool:
    """Overwrite the values of ``names`` in the initial environment block with NULs;
    False when the block could not be found or written (not Linux, no ``/proc``)."""
    span = _initial_block_range()
    if span is None:
        return False
    start, end = span
    try:
        fd = os.open("/proc/self/mem", os.O_RDWR)
    except OSError:
        return False
    try:
        block = os.pread(fd, end - start, start)
        offset = 0
        for entry in block.split(b"\0"):
            name, equals, value = entry.partition(b"=")
            if equals and value and name in names:
                os.pwrite(fd, bytes(len(value)), start + offset + len(name) + 1)
            offset += len(entry) + 1
    except OSError:
        return False
    finally:
        os.close(fd)
    return True
