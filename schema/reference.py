"""Where the upstream reference schemas are, and what a test does when they are missing.

The reference material (official ACP schemas, read for facts only) lives outside the
project, in ``../shared/reference`` beside the checkout (``ACP_REFERENCE_DIR`` overrides).
Without that folder, the cache of ``python -m acp_schema.upstream`` is used instead
(``~/.cache/acp-schema``, ``ACP_SCHEMA_CACHE`` overrides): it has the same layout, holding
the npm SDK releases it fetched, so the newest-upstream tests run in a fresh clone too.
``NEWEST_UPSTREAM`` is the one setting naming the newest upstream release per protocol
version: drift checks, differential tests and the scaffold compare against it. Older
releases that tests replay as history (what changed between two releases) are listed
separately in ``HISTORY`` so that moving to a new release changes one line.

Tests that need these files call :func:`require`: it skips with one reason, the same for
every test (so pytest prints one line saying what to fetch and how), when a file is missing,
or fails when ``ACP_REFERENCE_REQUIRED=1`` (CI sets it), so a missing folder can
never silently turn hundreds of tests into skips.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

REQUIRED_ENV = "ACP_REFERENCE_REQUIRED"
DIR_ENV = "ACP_REFERENCE_DIR"
CACHE_ENV = "ACP_SCHEMA_CACHE"

#: Protocol version → newest upstream schema (relative to the reference folder).
NEWEST_UPSTREAM: dict[str, str] = {
    "v1": "acp-npm-sdk-2.4.0/v1/schema.json",
    "v2": "acp-npm-sdk-2.4.0/v2/schema.json",  # the newest draft, as the SDK 2.4.0 bundles it
}

#: The unstable companion of each newest schema (methods the stable one lacks).
NEWEST_UPSTREAM_UNSTABLE: dict[str, str] = {
    "v1": "acp-npm-sdk-2.4.0/v1/schema.unstable.json",
    "v2": "acp-npm-sdk-2.4.0/v2/schema.unstable.json",
}

#: Older releases kept as fixtures for history tests ("what did release X add?").
HISTORY: dict[str, str] = {
    "v1@1.21.0": "acp-v1/schema.json",
    "v1@1.21.0-unstable": "acp-v1/schema.unstable.json",
    # The spec repository's v2 draft 2.0.0-alpha.3 (2026-08; the last one with JSON-RPC batches
    # that the reference folder holds).
    "v2@2.0.0-alpha.3": "acp-v2-draft/schema.json",
    "v2@2.0.0-alpha.3-unstable": "acp-v2-draft/schema.unstable.json",
}


def shared_reference_dir() -> Path:
    """``../shared/reference`` beside the checkout."""
    project_root = Path(__file__).resolve().parent.parent
    return project_root.parent / "shared" / "reference"


def cache_root() -> Path:
    """Where ``acp_schema.upstream`` keeps fetched releases: ``$ACP_SCHEMA_CACHE``, else
    ``$XDG_CACHE_HOME/acp-schema``, else ``~/.cache/acp-schema``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acp-schema"


def reference_dir() -> Path:
    """``$ACP_REFERENCE_DIR``; else ``../shared/reference`` when present; else the cache."""
    configured = os.environ.get(DIR_ENV)
    if configured:
        return Path(configured)
    shared = shared_reference_dir()
    if shared.is_dir() or not cache_root().is_dir():
        return shared
    return cache_root()


def newest_sdk_version() -> str:
    """The npm SDK release ``NEWEST_UPSTREAM`` names (``acp-npm-sdk-2.4.0/...`` → 2.4.0)."""
    folder = NEWEST_UPSTREAM["v1"].split("/", 1)[0]
    return folder.removeprefix("acp-npm-sdk-")


def newest_upstream(version: str = "v1", *, unstable: bool = False) -> Path:
    table = NEWEST_UPSTREAM_UNSTABLE if unstable else NEWEST_UPSTREAM
    return reference_dir() / table[version]


def history(release: str) -> Path:
    return reference_dir() / HISTORY[release]


def is_required() -> bool:
    return os.environ.get(REQUIRED_ENV, "") == "1"


def missing_message(path: Path) -> str:
    """Why a test cannot run, worded the same for every test that misses the same thing.

    The path is left out on purpose: one identical reason lets pytest fold hundreds of
    skips into one line that says what to fetch and how.
    """
    newest = {reference_dir() / relpath for relpath in NEWEST_UPSTREAM.values()}
    newest |= {reference_dir() / relpath for relpath in NEWEST_UPSTREAM_UNSTABLE.values()}
    if path in newest:
        return (
            "reference material not found: upstream ACP schemas (npm SDK"
            f" {newest_sdk_version()}) are in neither ../shared/reference nor {cache_root()};"
            f" fetch them with `python -m acp_schema.upstream --sdk {newest_sdk_version()}"
            " --fetch-only` (needs the npm registry)"
        )
    return (
        "reference material not found: an older upstream release kept as history, only in"
        " ../shared/reference (see its README.md); set ACP_REFERENCE_DIR to another copy"
    )


def require(*paths: Path) -> None:
    """Skip the calling test when a file is missing — or fail when references are required.

    Only for tests (imports pytest on use).
    """
    missing = [path for path in paths if not path.is_file()]
    if missing:
        _missing(missing_message(missing[0]))


def _missing(reason: str) -> NoReturn:
    import pytest

    if is_required():
        pytest.fail(f"{REQUIRED_ENV}=1 but {reason}", pytrace=False)
    pytest.skip(reason)
