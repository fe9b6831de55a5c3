"""``python -m acp_schema.upstream`` against a local npm registry the test builds.

A real HTTP server on 127.0.0.1 serves the package metadata and a tarball made here (no
internet): the fetcher resolves the tag, checks the sha512 integrity, extracts only the
schema files, caches them, and refuses a tarball that does not match its metadata.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from acp_schema import reference, upstream

VERSION = "9.8.7"
SCHEMA_V1 = {"$defs": {"Thing": {"type": "object"}}}
SCHEMA_V2 = {"$defs": {"Other": {"type": "string"}}}


def _tarball(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return buffer.getvalue()


def _sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def _package(schemas: dict[str, Any] | None = None) -> dict[str, bytes]:
    schemas = schemas or {"v1": SCHEMA_V1, "v2": SCHEMA_V2}
    members = {"package/package.json": b'{"name": "@agentclientprotocol/sdk"}'}
    for folder, document in schemas.items():
        members[f"package/schema/{folder}/schema.json"] = json.dumps(document).encode()
        members[f"package/schema/{folder}/schema.unstable.json"] = json.dumps(document).encode()
    return members


class Registry:
    """What the local registry serves; ``tarball_requests`` counts downloads."""

    def __init__(self, tarball: bytes, integrity: str | None = None) -> None:
        self.tarball = tarball
        self.integrity = integrity or _sri(tarball)
        self.tarball_requests = 0
        self.url = ""

    def metadata(self) -> dict[str, Any]:
        dist = {"tarball": f"{self.url}/sdk-{VERSION}.tgz", "integrity": self.integrity}
        return {
            "name": upstream.PACKAGE,
            "dist-tags": {"latest": VERSION},
            "versions": {VERSION: {"version": VERSION, "dist": dist}},
        }


@pytest.fixture
def registry() -> Iterator[Registry]:
    state = Registry(_tarball(_package()))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/@agentclientprotocol%2Fsdk":
                body = json.dumps(state.metadata()).encode()
            elif self.path == f"/sdk-{VERSION}.tgz":
                state.tarball_requests += 1
                body = state.tarball
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_latest_is_resolved_checked_extracted_and_cached(
    registry: Registry, tmp_path: Path
) -> None:
    folder = upstream.fetch("latest", registry=registry.url, cache=tmp_path)
    assert folder == tmp_path / f"acp-npm-sdk-{VERSION}"
    assert json.loads((folder / "v1" / "schema.json").read_text()) == SCHEMA_V1
    assert json.loads((folder / "v2" / "schema.unstable.json").read_text()) == SCHEMA_V2
    assert not (folder / "package.json").exists()  # only the schema folders are taken
    assert (folder / upstream.INTEGRITY_FILE).read_text().strip() == registry.integrity
    # A second fetch of the same release finds it complete and downloads nothing.
    assert upstream.fetch(VERSION, registry=registry.url, cache=tmp_path) == folder
    assert registry.tarball_requests == 1
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]  # no staging left


def test_an_integrity_mismatch_writes_nothing_and_says_why(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry.integrity = _sri(b"some other tarball")
    with pytest.raises(upstream.IntegrityError, match="does not match the registry"):
        upstream.fetch("latest", registry=registry.url, cache=tmp_path)
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []
    code = upstream.main(["--registry", registry.url, "--cache", str(tmp_path)])
    assert code == 2
    assert "sha512 does not match" in capsys.readouterr().err


def test_metadata_without_sha512_is_refused(registry: Registry, tmp_path: Path) -> None:
    sha1 = base64.b64encode(hashlib.sha1(registry.tarball).digest()).decode()
    registry.integrity = "sha1-" + sha1
    with pytest.raises(upstream.IntegrityError, match="no sha512 integrity"):
        upstream.fetch("latest", registry=registry.url, cache=tmp_path)


def test_an_unknown_version_names_the_tags(registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(upstream.UpstreamError, match=r"no version or tag '0\.0\.1' \(tags: latest"):
        upstream.fetch("0.0.1", registry=registry.url, cache=tmp_path)


def test_an_unreachable_registry_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(upstream.UpstreamError, match=r"127\.0\.0\.1:9"):
        upstream.fetch("latest", registry="http://127.0.0.1:9", cache=tmp_path)


def test_links_and_paths_outside_the_schema_folders_are_ignored(
    registry: Registry, tmp_path: Path
) -> None:
    members = _package()
    members["package/schema/v1/../../../escape.json"] = b"{}"
    members["package/schema/v1/nested/deep.json"] = b"{}"
    registry.tarball = _tarball(members, links={"package/schema/v2/link.json": "/etc/passwd"})
    registry.integrity = _sri(registry.tarball)
    folder = upstream.fetch("latest", registry=registry.url, cache=tmp_path / "cache")
    taken = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert taken == [
        ".integrity",
        "v1/schema.json",
        "v1/schema.unstable.json",
        "v2/schema.json",
        "v2/schema.unstable.json",
    ]
    assert not (tmp_path / "escape.json").exists()


def test_a_tarball_without_both_versions_is_refused(registry: Registry, tmp_path: Path) -> None:
    registry.tarball = _tarball(_package({"v1": SCHEMA_V1}))
    registry.integrity = _sri(registry.tarball)
    with pytest.raises(upstream.UpstreamError, match=r"no package/schema/v2/schema\.json"):
        upstream.fetch("latest", registry=registry.url, cache=tmp_path)


def test_the_command_prints_the_drift_of_both_versions(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The real newest release's schemas, served as a package the registry describes.
    v1, v2 = reference.newest_upstream("v1"), reference.newest_upstream("v2")
    reference.require(v1, v2)
    schemas = {"v1": json.loads(v1.read_text()), "v2": json.loads(v2.read_text())}
    registry.tarball = _tarball(_package(schemas))
    registry.integrity = _sri(registry.tarball)
    code = upstream.main(["--registry", registry.url, "--cache", str(tmp_path)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "== v1 ==" in printed and "== v2 ==" in printed
    assert printed.count("No differences beyond the allowlist.") == 2


def test_the_reference_lookup_falls_back_to_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.delenv(reference.DIR_ENV, raising=False)
    monkeypatch.setenv(reference.CACHE_ENV, str(cache))
    monkeypatch.setattr(reference, "shared_reference_dir", lambda: tmp_path / "no-shared")
    assert reference.reference_dir() == cache
    assert reference.newest_upstream("v2") == cache / reference.NEWEST_UPSTREAM["v2"]
    # The shared folder wins whenever it exists.
    (tmp_path / "no-shared").mkdir()
    assert reference.reference_dir() == tmp_path / "no-shared"


def test_every_missing_newest_file_gives_the_same_reason_naming_the_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(reference.DIR_ENV, str(tmp_path / "absent"))
    reasons = {
        reference.missing_message(reference.newest_upstream(version, unstable=unstable))
        for version in ("v1", "v2")
        for unstable in (False, True)
    }
    assert len(reasons) == 1
    (reason,) = reasons
    sdk = reference.newest_sdk_version()
    assert f"python -m acp_schema.upstream --sdk {sdk} --fetch-only" in reason
