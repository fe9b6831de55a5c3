"""Follow upstream with one command: ``python -m acp_schema.upstream [--sdk VERSION|latest]``.

The newest ACP schemas ship inside the official TypeScript SDK's npm package
(``@agentclientprotocol/sdk``, folder ``schema/``). This command asks the npm registry for the
package's metadata, downloads the release's tarball, checks it against the ``sha512``
integrity the registry publishes (a mismatch stops everything: nothing is written), extracts
``schema/v1/*.json`` and ``schema/v2/*.json`` into the cache, and prints the drift report of
each protocol version against them (``--scaffold`` writes the skeletons too).

The cache mirrors the reference folder's layout (``<cache>/acp-npm-sdk-<version>/v1/...``),
so :func:`acp_schema.reference.reference_dir` can use it as the reference folder when
``../shared/reference`` is absent. Standard library only (urllib, tarfile): the bindings
distribution gains no dependency for a maintainer's tool.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_schema.reference import cache_root

PACKAGE = "@agentclientprotocol/sdk"
DEFAULT_REGISTRY = "https://registry.npmjs.org"
REGISTRY_ENV = "ACP_NPM_REGISTRY"
#: Protocol versions whose schema folders the tarball carries (``package/schema/<v>/``).
PROTOCOL_FOLDERS = ("v1", "v2")
#: The marker of a complete extraction: the integrity string it was checked against.
INTEGRITY_FILE = ".integrity"
#: A tarball member we take: ``package/schema/v1/schema.json`` and the like (no sub-folders).
_MEMBER = re.compile(r"^package/schema/(v[0-9]+)/([A-Za-z0-9_.-]+\.json)$")
_HTTP_TIMEOUT_S = 60.0


class UpstreamError(Exception):
    """Fetching or unpacking the release failed; the message says what and where."""


class IntegrityError(UpstreamError):
    """The downloaded tarball is not the one the registry's metadata describes."""


@dataclass(frozen=True)
class Release:
    """One published version of the SDK as the registry describes it."""

    version: str
    tarball: str
    integrity: str


def release_folder_name(version: str) -> str:
    """The folder of one release, named as in the reference folder (``acp-npm-sdk-2.4.0``)."""
    return f"acp-npm-sdk-{version}"


def _get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": "application/json, */*"})
    try:
        with urllib.request.urlopen(request, timeout=_HTTP_TIMEOUT_S) as response:
            data: bytes = response.read()
            return data
    except urllib.error.HTTPError as error:
        raise UpstreamError(f"{url}: HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, OSError) as error:
        raise UpstreamError(f"{url}: {getattr(error, 'reason', error)}") from None


def metadata_url(registry: str) -> str:
    # Scoped names keep their ``@`` and escape the slash, as npm's own client asks.
    return f"{registry.rstrip('/')}/{urllib.parse.quote(PACKAGE, safe='@')}"


def resolve(registry: str, wanted: str) -> Release:
    """The release ``wanted`` names (a version or a dist-tag such as ``latest``)."""
    url = metadata_url(registry)
    try:
        document: Any = json.loads(_get(url))
    except json.JSONDecodeError as error:
        raise UpstreamError(f"{url}: not JSON ({error})") from None
    if not isinstance(document, dict):
        raise UpstreamError(f"{url}: the package metadata is not an object")
    tags = document.get("dist-tags") or {}
    version = tags.get(wanted, wanted) if isinstance(tags, dict) else wanted
    entry = (document.get("versions") or {}).get(version)
    if not isinstance(entry, dict):
        known = ", ".join(sorted(tags)) if isinstance(tags, dict) else ""
        raise UpstreamError(f"{PACKAGE}: no version or tag {wanted!r} (tags: {known or 'none'})")
    dist = entry.get("dist") or {}
    tarball, integrity = dist.get("tarball"), dist.get("integrity")
    if not isinstance(tarball, str) or not isinstance(integrity, str):
        raise UpstreamError(f"{PACKAGE}@{version}: the metadata has no tarball or integrity")
    return Release(version=version, tarball=tarball, integrity=integrity)


def check_integrity(data: bytes, integrity: str) -> None:
    """Compare ``data`` with an SRI string; only ``sha512`` is accepted (npm's own choice).

    The registry may list several hashes separated by spaces; the sha512 one must match.
    """
    expected = [item for item in integrity.split() if item.startswith("sha512-")]
    if not expected:
        raise IntegrityError(f"no sha512 integrity in the registry metadata: {integrity!r}")
    actual = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")
    if actual not in expected:
        raise IntegrityError(
            f"the tarball's sha512 does not match the registry: expected {expected[0]}, "
            f"got {actual}"
        )


def extract_schemas(data: bytes, destination: Path) -> list[Path]:
    """Write ``package/schema/v*/*.json`` of the tarball ``data`` under ``destination``.

    Only regular files whose names match exactly are read (no links, no paths that climb
    out), and every one must be JSON; a tarball without a v1 and a v2 schema is refused.
    """
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            written = _extract_members(archive, destination)
    except tarfile.TarError as error:
        raise UpstreamError(f"the tarball cannot be read: {error}") from None
    for folder in PROTOCOL_FOLDERS:
        if not (destination / folder / "schema.json").is_file():
            raise UpstreamError(f"the tarball has no package/schema/{folder}/schema.json")
    return written


def _extract_members(archive: tarfile.TarFile, destination: Path) -> list[Path]:
    written: list[Path] = []
    for member in archive.getmembers():
        match = _MEMBER.match(member.name)
        if match is None or not member.isfile():
            continue
        handle = archive.extractfile(member)
        if handle is None:
            continue
        content = handle.read()
        try:
            json.loads(content)
        except json.JSONDecodeError as error:
            raise UpstreamError(f"{member.name} is not JSON: {error}") from None
        target = destination / match.group(1) / match.group(2)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written.append(target)
    return written


def fetch(
    wanted: str = "latest", *, registry: str | None = None, cache: Path | None = None
) -> Path:
    """The cached schema folder of release ``wanted``, downloaded and checked when needed."""
    registry = registry or os.environ.get(REGISTRY_ENV) or DEFAULT_REGISTRY
    cache = cache or cache_root()
    release = resolve(registry, wanted)
    folder = cache / release_folder_name(release.version)
    marker = folder / INTEGRITY_FILE
    if marker.is_file() and marker.read_text(encoding="utf-8").strip() == release.integrity:
        return folder
    data = _get(release.tarball)
    check_integrity(data, release.integrity)
    cache.mkdir(parents=True, exist_ok=True)
    # Extracted beside the final folder and renamed into place, so a half-written release
    # never looks complete (the marker is the last file written).
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=cache))
    staging.chmod(0o755)  # mkdtemp's folder is private; the cache is plain reference data
    try:
        extract_schemas(data, staging)
        (staging / INTEGRITY_FILE).write_text(release.integrity + "\n", encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


HELP = """\
Fetch the ACP schemas bundled in the npm package @agentclientprotocol/sdk (integrity checked
against the registry's sha512), cache them, and print the drift report of schema/ (v1) and
schema/v2/ against them.

The cache (default ~/.cache/acp-schema, or $ACP_SCHEMA_CACHE) has the reference folder's
layout; tests read it when ../shared/reference is absent.

Exit codes: 0 no drift beyond the allowlists, 1 drift, 2 the fetch failed.
"""


def main(argv: Sequence[str] | None = None) -> int:
    from acp_schema import drift

    parser = argparse.ArgumentParser(
        prog="python -m acp_schema.upstream",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--sdk", default="latest", help="SDK version or dist-tag to fetch (default: latest)"
    )
    parser.add_argument(
        "--registry",
        default=None,
        help=f"npm registry URL (default: ${REGISTRY_ENV} or {DEFAULT_REGISTRY})",
    )
    parser.add_argument("--cache", type=Path, default=None, help="cache folder (see above)")
    parser.add_argument(
        "--scaffold",
        action="store_true",
        help="also write the skeleton of what upstream has and we lack (see acp_schema.drift)",
    )
    parser.add_argument(
        "--fetch-only", action="store_true", help="fetch and cache; print no drift report"
    )
    args = parser.parse_args(argv)
    try:
        folder = fetch(args.sdk, registry=args.registry, cache=args.cache)
    except UpstreamError as error:
        print(f"upstream: {error}", file=sys.stderr)
        return 2
    print(f"{PACKAGE}: schemas in {folder}")
    if args.fetch_only:
        return 0
    worst = 0
    for version in PROTOCOL_FOLDERS:
        print(f"\n== {version} ==")
        sys.stdout.flush()
        options = ["--version", version, "--upstream", str(folder / version / "schema.json")]
        worst = max(worst, drift.main(options + (["--scaffold"] if args.scaffold else [])))
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
