"""The project's JSON Schemas for ACP v1, installed as package data, and their tooling.

The schema files are the source of truth for the wire format. This module only finds and
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
    "SCHEMA_FOLDERS",
    "definition_uri",
    "iter_documents",
    "load_document",
    "load_index",
    "registry",
    "schema_root",
]

#: Every schema file is registered under this base, at ``BASE_URI + relpath``. The host is
#: reserved (``.invalid``) so nothing ever tries to fetch it; relative ``$ref``s between files
#: resolve against it exactly as they do on disk.
BASE_URI = "https://schemas.iac-code.invalid/acp/v1/"

#: Folders holding schema documents. Everything else in the package (``index.json``, wire
#: ``cases/``, drift allowlists, code generator templates) is data *about* the schemas.
SCHEMA_FOLDERS = ("defs", "methods", "notifications", "updates", "errors", "extensions")

INDEX_FILE = "index.json"


def schema_root() -> Traversable:
    """Return the folder that holds ``index.json`` and the schema folders."""
    return importlib.resources.files(__name__)


def _read_json(node: Traversable) -> Any:
    return json.loads(node.read_text(encoding="utf-8"))


def _resolve(relpath: str) -> Traversable:
    node = schema_root()
    for part in relpath.split("/"):
        node = node / part
    return node


@functools.cache
def load_index() -> dict[str, Any]:
    """Return ``index.json``: methods, update kinds, error codes and the extensions file.

    The result is cached and shared; callers must not mutate it.
    """
    index: dict[str, Any] = _read_json(schema_root() / INDEX_FILE)
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
def _document_paths() -> tuple[str, ...]:
    root = schema_root()
    paths: list[str] = []
    for folder in SCHEMA_FOLDERS:
        node = root / folder
        if node.is_dir():
            paths.extend(_walk(node, folder))
    return tuple(paths)


@functools.cache
def load_document(relpath: str) -> dict[str, Any]:
    """Return one schema file by its posix path relative to the schema root.

    The result is cached and shared (the registry holds the same objects); do not mutate it.
    """
    document: dict[str, Any] = _read_json(_resolve(relpath))
    return document


def iter_documents() -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(relpath, document)`` for every schema file, in a stable order."""
    for relpath in _document_paths():
        yield relpath, load_document(relpath)


def definition_uri(relpath: str, name: str) -> str:
    """Return the absolute URI of definition ``name`` in file ``relpath``."""
    return f"{BASE_URI}{relpath}#/$defs/{name}"


@functools.cache
def registry() -> Registry:
    """Return a ``referencing`` registry holding every schema file as a draft 2020-12 resource."""
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    resources = [
        (BASE_URI + relpath, DRAFT202012.create_resource(document))
        for relpath, document in iter_documents()
    ]
    built: Registry = Registry().with_resources(resources)
    return built.crawl()
