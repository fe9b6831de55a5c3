"""File names say what a module holds (issue 16 item 6).

Three ``server.py``, three ``connection.py`` and two ``base.py`` with different jobs (the
stdio entry, the agent's handler class, the scripted model server; the peer, the remote
routing, the checker's raw client; two contracts) made every grep and stack trace ambiguous.
The generic names below may be used by at most one module across the distributions.
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERIC_NAMES = {"server.py", "connection.py", "base.py", "core.py", "utils.py", "common.py"}
# The generated bindings name modules after the schema's definitions; codegen owns them.
GENERATED = "generated/acp_bindings/"


def _tracked_python_files() -> list[str]:
    listing = subprocess.run(
        ["git", "ls-files", "--", "runtime", "conformance", "generated"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if listing.returncode != 0:  # not a git checkout (an sdist): walk the folders instead
        return [
            str(path.relative_to(ROOT))
            for folder in ("runtime", "conformance", "generated")
            for path in (ROOT / folder).rglob("*.py")
        ]
    return [line for line in listing.stdout.splitlines() if line.endswith(".py")]


def test_generic_module_names_are_not_shared() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in _tracked_python_files():
        if path.startswith(GENERATED):
            continue
        name = path.rsplit("/", 1)[-1]
        if name in GENERIC_NAMES:
            by_name[name].append(path)
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not shared, f"generic module names used by more than one module: {shared}"
