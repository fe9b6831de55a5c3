"""Regenerate ``generated/acp_bindings/`` from ``schema/`` — ``python -m acp_schema.codegen``.

Usage::

    python -m acp_schema.codegen              # rewrite generated/acp_bindings/
    python -m acp_schema.codegen --check      # exit 1 with a diff when generated/ is stale
    python -m acp_schema.codegen --output DIR # write the package into DIR instead

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

from acp_schema import codegen_models, codegen_tables, openapi
from acp_schema.codegen_common import (
    DEFAULT_OUTPUT_DIR,
    SCHEMA_DIR,
    HeaderInfo,
    load_index,
    with_header,
)

#: Files in the output that are not Python sources (written verbatim, no header).
PLAIN_FILES = {"py.typed": ""}

#: Directory entries in an output tree that are never compared or removed.
IGNORED_NAMES = {"__pycache__"}


def build(schema_dir: Path = SCHEMA_DIR) -> dict[str, str]:
    """Render every generated file: package-relative POSIX path → file content."""
    index = load_index(schema_dir)
    index_header = HeaderInfo(schema_dir, ("index.json",))
    tables = {
        "__init__.py": codegen_tables.render_package_init(),
        "errors.py": codegen_tables.render_errors(index),
        "methods.py": codegen_tables.render_methods(index),
        "agent.py": codegen_tables.render_agent(index),
        "client.py": codegen_tables.render_client(index),
    }
    files = {path: with_header(index_header, body) for path, body in tables.items()}
    files.update(codegen_models.build_models(schema_dir))
    files.update(PLAIN_FILES)
    files["openapi.json"] = openapi.render(schema_dir)  # served at /openapi.json
    return dict(sorted(files.items()))


def read_tree(root: Path) -> dict[str, str]:
    """The generated files currently under ``root`` (same keys as ``build``)."""
    if not root.is_dir():
        return {}
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not IGNORED_NAMES.intersection(relative.parts):
            found[relative.as_posix()] = path.read_text(encoding="utf-8")
    return found


def write_tree(files: dict[str, str], root: Path) -> None:
    """Make ``root`` hold exactly ``files``: write changed files, delete stale ones."""
    current = read_tree(root)
    for relpath in sorted(set(current) - set(files)):
        (root / relpath).unlink()
    for relpath, content in files.items():
        if current.get(relpath) != content:
            target = root / relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8", newline="\n")
    _remove_empty_dirs(root)


def _remove_empty_dirs(root: Path) -> None:
    for directory in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        if directory.name in IGNORED_NAMES:
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


def check(output_dir: Path, schema_dir: Path = SCHEMA_DIR) -> str:
    """Regenerate into a temporary directory and diff it with ``output_dir`` ('' = clean)."""
    with tempfile.TemporaryDirectory(prefix="acp-codegen-check-") as scratch:
        fresh = Path(scratch) / "acp_bindings"
        write_tree(build(schema_dir), fresh)
        return diff_trees(read_tree(fresh), read_tree(output_dir), _display(output_dir))


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acp_schema.codegen", description=__doc__)
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 and print a unified diff when the output is stale",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT_DIR,
        help="package directory to write or check (default: generated/acp_bindings)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.check:
        diff = check(args.output)
        if diff:
            sys.stdout.write(diff)
            print(f"{_display(args.output)} is stale; run `python -m acp_schema.codegen`.")
            return 1
        print(f"{_display(args.output)} is up to date ({time.perf_counter() - started:.2f} s).")
        return 0
    files = build()
    write_tree(files, args.output)
    elapsed = time.perf_counter() - started
    print(f"wrote {len(files)} files to {_display(args.output)} in {elapsed:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
