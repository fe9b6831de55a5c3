"""Regenerate ``generated/acp_bindings/`` from ``schema/`` — ``python -m acp_schema.codegen``.

Usage::

    python -m acp_schema.codegen                   # rewrite every version's package
    python -m acp_schema.codegen --check           # exit 1 with a diff when generated/ is stale
    python -m acp_schema.codegen --version v2      # only one protocol version
    python -m acp_schema.codegen --version v1 --output DIR  # write one package into DIR

The versions (schema folder → package) are the table ``VERSIONS`` in
:mod:`acp_schema.codegen_common`: ``schema/`` → ``acp_bindings``, ``schema/v2/`` →
``acp_bindings.v2``. A version whose folder has no ``index.json`` yet is skipped.

The whole tree is rendered in memory first (``build``), so writing and checking share one
code path and a failed generation never leaves a half-written package behind.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from acp_schema import (
    codegen_derived,
    codegen_models,
    codegen_predicates,
    codegen_tables,
    openapi,
)
from acp_schema.codegen_common import (
    DEFAULT_TARGET,
    MANIFEST_FILE,
    VERSIONS,
    HeaderInfo,
    Target,
    load_index,
    render_manifest,
    schema_files,
    with_header,
)

#: Files in the output that are not Python sources (written verbatim, no header).
PLAIN_FILES = {"py.typed": ""}

#: Directory entries in an output tree that are never compared or removed.
IGNORED_NAMES = {"__pycache__"}


def build(target: Target = DEFAULT_TARGET) -> dict[str, str]:
    """Render every generated file of one version: package-relative POSIX path → content."""
    schema_dir, package = target.schema_dir, target.package
    index = load_index(schema_dir)
    index_header = HeaderInfo(target.schema_label, ("index.json",))
    tables = {
        "__init__.py": codegen_tables.render_package_init(target),
        "methods.py": codegen_tables.render_methods(index, package),
        "agent.py": codegen_tables.render_agent(index, package),
        "client.py": codegen_tables.render_client(index, package),
    }
    if target.owns_shared_errors():
        tables["shared_errors.py"] = codegen_tables.render_shared_errors(index)
    files = {path: with_header(index_header, body) for path, body in tables.items()}
    owner = target.shared_errors_owner()
    shared_sources = (
        {}
        if owner == target
        else {owner.schema_label + "/index.json": owner.schema_dir / "index.json"}
    )
    files["errors.py"] = with_header(
        HeaderInfo("", (f"{target.schema_label}/index.json", *shared_sources)),
        codegen_tables.render_version_errors(
            index, load_index(owner.schema_dir), target.shared_errors
        ),
    )
    files.update(codegen_models.build_models(schema_dir, target.schema_label))
    predicates = codegen_predicates.render_predicates(schema_dir, index)
    if predicates is not None:  # stdlib-only checks for the agent's start-up fast path
        body, sources = predicates
        files["predicates.py"] = with_header(HeaderInfo(target.schema_label, tuple(sources)), body)
    if codegen_predicates.SUPPORT_MODULE.rpartition(".")[0] == target.package:
        # The predicates' shared helpers, written by the package that holds them; they come
        # from the generator alone (no schema), which their header names as the source.
        files["predicate_support.py"] = with_header(
            HeaderInfo("", ("schema/codegen_predicates.py",)), codegen_predicates.SUPPORT
        )
    files.update(PLAIN_FILES)
    files[MANIFEST_FILE] = render_manifest(
        target, ["index.json", *schema_files(schema_dir)], shared_sources
    )
    if target == DEFAULT_TARGET:
        files["openapi.json"] = openapi.render(schema_dir)  # served at /openapi.json
    return dict(sorted(files.items()))


def read_tree(root: Path, ignored: frozenset[str] = frozenset()) -> dict[str, str]:
    """The generated files currently under ``root`` (same keys as ``build``).

    ``ignored`` names top-level entries owned by another package (``v2`` inside v1's).
    """
    if not root.is_dir():
        return {}
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if relative.parts[0] in ignored or IGNORED_NAMES.intersection(relative.parts):
            continue
        if path.is_file():
            found[relative.as_posix()] = path.read_text(encoding="utf-8")
    return found


def write_tree(files: dict[str, str], root: Path, ignored: frozenset[str] = frozenset()) -> None:
    """Make ``root`` hold exactly ``files``: write changed files, delete stale ones."""
    current = read_tree(root, ignored)
    for relpath in sorted(set(current) - set(files)):
        (root / relpath).unlink()
    for relpath, content in files.items():
        if current.get(relpath) != content:
            target = root / relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8", newline="\n")
    _remove_empty_dirs(root, ignored)


def _remove_empty_dirs(root: Path, ignored: frozenset[str]) -> None:
    for directory in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        if directory.name in IGNORED_NAMES or directory.relative_to(root).parts[0] in ignored:
            continue
        remaining = [p for p in directory.iterdir() if p.name not in IGNORED_NAMES]
        if not remaining:
            shutil.rmtree(directory)


def diff_trees(expected: dict[str, str], actual: dict[str, str], label: str) -> str:
    """Unified diff turning ``actual`` (on disk) into ``expected`` (freshly generated)."""
    chunks: list[str] = []
    for relpath in sorted(set(expected) | set(actual)):
        old, new = actual.get(relpath), expected.get(relpath)
        if old == new:
            continue
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"{label}/{relpath}" if old is not None else "/dev/null",
                tofile=f"regenerated/{relpath}" if new is not None else "/dev/null",
            )
        )
    return "".join(chunks)


def check(target: Target = DEFAULT_TARGET, output_dir: Path | None = None) -> str:
    """Regenerate into a temporary directory and diff it with the output ('' = clean)."""
    output = target.output_dir if output_dir is None else output_dir
    ignored = target.nested_outputs()
    with tempfile.TemporaryDirectory(prefix="acp-codegen-check-") as scratch:
        fresh = Path(scratch) / "package"
        write_tree(build(target), fresh)
        return diff_trees(read_tree(fresh), read_tree(output, ignored), _display(output))


def selected_targets(version: str) -> list[Target]:
    """The versions to generate: one by name, or (``all``) every one whose schemas exist."""
    if version != "all":
        return [VERSIONS[version]]
    return [t for t in VERSIONS.values() if (t.schema_dir / "index.json").is_file()]


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m acp_schema.codegen",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 and print a unified diff when the output is stale",
    )
    parser.add_argument(
        "--version",
        choices=[*VERSIONS, "all"],
        default="all",
        help="protocol version to generate (default: all versions whose schema folder exists)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="package directory to write or check, for a single --version "
        "(default: generated/<package>)",
    )
    args = parser.parse_args(argv)
    targets = selected_targets(args.version)
    if args.output is not None and args.version == "all":
        parser.error("--output needs a single --version")
    missing = [t for t in targets if not (t.schema_dir / "index.json").is_file()]
    if missing:
        parser.error(f"{missing[0].schema_label}/index.json does not exist")
    status = 0
    for target in targets:
        status = max(status, _run_one(target, args.output, check_only=args.check))
    return status


def _run_one(target: Target, output: Path | None, *, check_only: bool) -> int:
    started = time.perf_counter()
    destination = target.output_dir if output is None else output
    if check_only:
        stale_schema = codegen_derived.stale_derived(target.schema_dir)
        for relpath, (current, derived) in sorted(stale_schema.items()):
            label = f"{target.schema_label}/{relpath}"
            sys.stdout.writelines(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    derived.splitlines(keepends=True),
                    fromfile=label,
                    tofile=f"derived from index.json/{relpath}",
                )
            )
        if stale_schema:
            print(
                f"{target.schema_label}: parts derived from index.json are stale; "
                "run `python -m acp_schema.codegen`."
            )
            return 1
        diff = check(target, destination)
        if diff:
            sys.stdout.write(diff)
            print(f"{_display(destination)} is stale; run `python -m acp_schema.codegen`.")
            return 1
        elapsed = time.perf_counter() - started
        print(f"{_display(destination)} is up to date ({elapsed:.2f} s).")
        return 0
    for relpath in codegen_derived.write_derived(target.schema_dir):
        print(f"derived from index.json: {target.schema_label}/{relpath}")
    files = build(target)
    write_tree(files, destination, target.nested_outputs())
    elapsed = time.perf_counter() - started
    print(f"wrote {len(files)} files to {_display(destination)} in {elapsed:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
