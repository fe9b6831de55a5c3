"""The project's JSON Schemas for ACP v1 and v2, installed as package data, and their tooling.

The schema files are the source of truth for the wire format. Version 1 lives at the package
root, each later version in its own folder (``v2/``) with the same layout; every function
takes ``version=`` (default 1) and never mixes two versions' files. This module only finds and
loads them; it uses the standard library alone so that importing it stays cheap. The
`referencing` registry is built on first use, and validation lives in
:mod:`acp_schema.validation` so that `jsonschema` is imported only by callers that validate.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from collections.abc import Iterator
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referencing import Registry

__all__ = [
    "BASE_URI",
    "DEFAULT_VERSION",
    "SCHEMA_FOLDERS",
    "SUPPORTED_VERSIONS",
    "base_uri",
    "definition_uri",
    "iter_documents",
    "load_document",
    "load_index",
    "registry",
    "schema_root",
]

#: Protocol versions with a schema set, oldest first, and the one used when none is named.
SUPPORTED_VERSIONS = (1, 2)
DEFAULT_VERSION = 1

#: Every v1 schema file is registered under this base, at ``BASE_URI + relpath``. The host
#: is reserved (``.invalid``) so nothing ever tries to fetch it; relative ``$ref``s between
#: files resolve against it exactly as they do on disk. Version N uses ``.../acp/vN/``.
BASE_URI = "https://schemas.iac-code.invalid/acp/v1/"

#: Folders holding schema documents. Everything else in the package (``index.json``, wire
#: ``cases/``, drift allowlists, code generator templates) is data *about* the schemas.
SCHEMA_FOLDERS = ("defs", "methods", "notifications", "updates", "errors", "extensions")

INDEX_FILE = "index.json"


def _check_version(version: int) -> None:
    if version not in SUPPORTED_VERSIONS:
        raise ValueError(f"no schemas for protocol version {version!r}; have {SUPPORTED_VERSIONS}")


def base_uri(version: int = DEFAULT_VERSION) -> str:
    """Return the URI under which the files of protocol ``version`` are registered."""
    _check_version(version)
    return f"https://schemas.iac-code.invalid/acp/v{version}/"


def schema_root(version: int = DEFAULT_VERSION) -> Traversable:
    """Return the folder that holds ``index.json`` and the schema folders of ``version``."""
    _check_version(version)
    root = importlib.resources.files(__name__)
    return root if version == 1 else root / f"v{version}"


def _read_json(node: Traversable) -> Any:
    return json.loads(node.read_text(encoding="utf-8"))


def _resolve(relpath: str, version: int) -> Traversable:
    node = schema_root(version)
    for part in relpath.split("/"):
        node = node / part
    return node


def load_index(version: int = DEFAULT_VERSION) -> dict[str, Any]:
    """Return ``index.json`` of ``version``: methods, update kinds, error codes, extensions.

    The result is cached and shared; callers must not mutate it.
    """
    return _load_index(version)


@functools.cache
def _load_index(version: int) -> dict[str, Any]:
    index: dict[str, Any] = _read_json(schema_root(version) / INDEX_FILE)
    return index


def _is_schema_file(name: str) -> bool:
    return name.endswith(".json") and "allowlist" not in name


def _walk(node: Traversable, prefix: str) -> Iterator[str]:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        relpath = f"{prefix}/{child.name}"
        if child.is_dir():
            yield from _walk(child, relpath)
        elif _is_schema_file(child.name):
            yield relpath


@functools.cache
def _document_paths(version: int) -> tuple[str, ...]:
    root = schema_root(version)
    paths: list[str] = []
    for folder in SCHEMA_FOLDERS:
        node = root / folder
        if node.is_dir():
            paths.extend(_walk(node, folder))
    return tuple(paths)


def load_document(relpath: str, version: int = DEFAULT_VERSION) -> dict[str, Any]:
    """Return one schema file by its posix path relative to the root of ``version``.

    The result is cached and shared (the registry holds the same objects); do not mutate it.
    """
    return _load_document(relpath, version)


# Cached on positional arguments only: ``functools.cache`` keys ``f(x, version=2)`` and
# ``f(x, 2)`` apart, and every caller must get the very object the registry holds.
@functools.cache
def _load_document(relpath: str, version: int) -> dict[str, Any]:
    document: dict[str, Any] = _read_json(_resolve(relpath, version))
    return document


def iter_documents(version: int = DEFAULT_VERSION) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(relpath, document)`` for every schema file of ``version``, in a stable order."""
    for relpath in _document_paths(version):
        yield relpath, load_document(relpath, version)


def definition_uri(relpath: str, name: str, version: int = DEFAULT_VERSION) -> str:
    """Return the absolute URI of definition ``name`` in file ``relpath`` of ``version``."""
    return f"{base_uri(version)}{relpath}#/$defs/{name}"


def registry(version: int = DEFAULT_VERSION) -> Registry:
    """Return a ``referencing`` registry holding every schema file of ``version``."""
    return _registry(version)


@functools.cache
def _registry(version: int) -> Registry:
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    base = base_uri(version)
    resources = [
        (base + relpath, DRAFT202012.create_resource(document))
        for relpath, document in iter_documents(version)
    ]
    built: Registry = Registry().with_resources(resources)
    return built.crawl()
