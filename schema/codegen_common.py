"""Shared pieces of the code generator: paths, the index, naming rules and file headers.

Everything here is deterministic: inputs are read in sorted order and nothing depends on the
clock, the machine or the working directory, so two runs produce byte-identical output.
"""

from __future__ import annotations

import hashlib
import json
import keyword
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

#: Bump when the generator's own output changes shape (templates, naming, post-processing),
#: so that the manifest tells which generator wrote a package.
CODEGEN_REVISION = 3


def _source_tree() -> tuple[Path, Path]:
    """(project root, schema folder) of the checkout the generator works on.

    The generator rewrites ``generated/`` in a source tree, so it looks for one from the
    working directory up (a ``pyproject.toml`` beside ``schema/index.json``). Only when run
    outside a checkout does it fall back to the tree this module lives in (editable
    installs): a non-editable install (tox, a wheel) has no ``generated/`` next to it.
    """
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / "pyproject.toml").is_file() and (
            candidate / "schema" / "index.json"
        ).is_file():
            return candidate, candidate / "schema"
    module_dir = Path(__file__).resolve().parent
    return module_dir.parent, module_dir


PROJECT_ROOT, SCHEMA_DIR = _source_tree()
GENERATED_DIR = PROJECT_ROOT / "generated"


@dataclass(frozen=True)
class Target:
    """One protocol version's bindings: which schema folder becomes which Python package.

    ``schema_subdir`` is relative to the schema root (``""`` for v1, which lives at the root);
    the package is written to ``generated/<package with dots as slashes>``.
    """

    version: str
    schema_subdir: str
    package: str
    #: Where schema folders and generated packages live (tests point these at a copy).
    schema_root: Path = SCHEMA_DIR
    generated_root: Path = GENERATED_DIR
    #: The module holding the one error tree of every version (see :meth:`owns_shared_errors`).
    shared_errors: str = "acp_bindings.shared_errors"

    def owns_shared_errors(self) -> bool:
        """Whether this package writes the shared error tree (from its own ``index.json``).

        Every other version's ``errors.py`` re-exports the classes of that tree, so one
        ``except`` catches a protocol error of any version.
        """
        return self.shared_errors.rpartition(".")[0] == self.package

    def shared_errors_owner(self) -> Target:
        """The version whose ``index.json`` defines the shared error tree, on the same roots."""
        if self.owns_shared_errors():
            return self
        for other in VERSIONS.values():
            if other.shared_errors == self.shared_errors and other.owns_shared_errors():
                return replace(
                    other, schema_root=self.schema_root, generated_root=self.generated_root
                )
        raise ValueError(f"no version writes {self.shared_errors}, which {self.package} needs")

    @property
    def schema_dir(self) -> Path:
        return self.schema_root / self.schema_subdir if self.schema_subdir else self.schema_root

    @property
    def output_dir(self) -> Path:
        return self.generated_root.joinpath(*self.package.split("."))

    @property
    def schema_label(self) -> str:
        """How generated files name the schema folder: ``schema`` or ``schema/v2``."""
        return "/".join(part for part in ("schema", self.schema_subdir) if part)

    def nested_outputs(self) -> frozenset[str]:
        """Top-level entries of this package that belong to another version's package.

        ``acp_bindings.v2`` lives inside ``acp_bindings``; writing or checking v1 must neither
        delete nor compare the ``v2/`` folder.
        """
        prefix = self.package + "."
        return frozenset(
            other.package.removeprefix(prefix).split(".")[0]
            for other in VERSIONS.values()
            if other.package.startswith(prefix)
        )


#: The one table of protocol versions the generator knows (schema folder, package name).
#: A version whose ``index.json`` does not exist yet is skipped by ``--version all``.
VERSIONS: dict[str, Target] = {
    "v1": Target(version="v1", schema_subdir="", package="acp_bindings"),
    "v2": Target(version="v2", schema_subdir="v2", package="acp_bindings.v2"),
}
DEFAULT_TARGET = VERSIONS["v1"]
DEFAULT_OUTPUT_DIR = DEFAULT_TARGET.output_dir
INDEX_FILE = SCHEMA_DIR / "index.json"

#: Top-level schema folders that hold model definitions (``cases/`` holds wire data, not schemas).
SCHEMA_FOLDERS = ("defs", "methods", "notifications", "updates", "errors", "extensions")

REGENERATE_COMMAND = "python -m acp_schema.codegen"


def datamodel_codegen_version() -> str:
    """Version of datamodel-code-generator recorded in headers (pinned in pyproject)."""
    try:
        return metadata.version("datamodel-code-generator")
    except metadata.PackageNotFoundError:  # pragma: no cover - only without dev extras
        return "not installed"


def load_index(schema_dir: Path = SCHEMA_DIR) -> dict[str, Any]:
    """Read ``index.json`` (kept local so generation does not depend on other tooling)."""
    with (schema_dir / "index.json").open(encoding="utf-8") as handle:
        index: dict[str, Any] = json.load(handle)
    return index


def schema_files(schema_dir: Path = SCHEMA_DIR) -> list[str]:
    """Relative paths (POSIX, sorted) of every schema document that becomes a models module."""
    found: list[str] = []
    for folder in SCHEMA_FOLDERS:
        base = schema_dir / folder
        if base.is_dir():
            found.extend(path.relative_to(schema_dir).as_posix() for path in base.rglob("*.json"))
    return sorted(found)


def python_method_name(wire_name: str) -> str:
    """Python name of a wire method: ``session/new`` → ``session_new``, ``$/x`` → ``x``."""
    name = wire_name.removeprefix("$/").replace("/", "_")
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"wire method {wire_name!r} does not map to a Python identifier")
    return name


def module_name_for(schema_relpath: str) -> str:
    """Dotted module path under ``acp_bindings.models`` for a schema file.

    ``methods/session.new.json`` → ``methods.session_new``; dots and dashes in file names
    become underscores so that each schema file is exactly one importable module.
    """
    parts = schema_relpath.removesuffix(".json").split("/")
    return ".".join(part.replace(".", "_").replace("-", "_") for part in parts)


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


#: The manifest written at the root of each generated package: the sha256 of every source
#: file and the generator versions. It is the one file that changes when a source changes
#: without changing what is generated, instead of a header in every generated module.
MANIFEST_FILE = "sources.json"


def render_manifest(
    target: Target, relpaths: Iterable[str], others: Mapping[str, Path] | None = None
) -> str:
    """``sources.json`` for ``target``: generator versions and one hash per source file.

    ``others`` names sources outside the target's schema folder (label → path), such as the
    index of the version that defines the shared error tree.
    """
    sources = {
        f"{target.schema_label}/{relpath}": file_digest(target.schema_dir / relpath)
        for relpath in sorted(set(relpaths))
    }
    sources.update({label: file_digest(path) for label, path in (others or {}).items()})
    document = {
        "$comment": f"Written by `{REGENERATE_COMMAND}`; do not edit.",
        "package": target.package,
        "generators": {
            "datamodel-code-generator": datamodel_codegen_version(),
            "acp_schema.codegen": CODEGEN_REVISION,
        },
        "sources": dict(sorted(sources.items())),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class HeaderInfo:
    """What every generated file states about where it came from (hashes: the manifest).

    ``schema_label`` prefixes each of ``sources``; ``""`` when they are labels already.
    """

    schema_label: str
    sources: tuple[str, ...]

    def render(self) -> str:
        prefix = f"{self.schema_label}/" if self.schema_label else ""
        sources = sorted({prefix + relpath for relpath in self.sources})
        lines = [
            f"# Generated by `{REGENERATE_COMMAND}` — do not edit.",
            f"# Regenerate: {REGENERATE_COMMAND}  (verify: {REGENERATE_COMMAND} --check)",
            f"# Source hashes and generator versions: {MANIFEST_FILE} in this package.",
            "# Sources:",
        ]
        lines.extend(f"#   {source}" for source in sources)
        return "\n".join(lines) + "\n"


def with_header(header: HeaderInfo, body: str) -> str:
    """Prefix ``body`` with the header; guarantees exactly one trailing newline."""
    return header.render() + body.rstrip("\n") + "\n"


def py_literal(value: object) -> str:
    """A stable Python literal for JSON-ish values (strings use double quotes)."""
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise TypeError(f"no literal for {type(value).__name__}")
