"""What the install tests share: copies of the sources, fresh venvs, bounded commands.

Sources are copied to a temporary folder first, so a stale ``build/`` folder in the checkout
can never leak into a build and the checkout is left untouched (pip and uv build in the
source folder).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("schema", "generated", "runtime", "conformance")
INSTALL_TIMEOUT = 600.0  # a cold pip cache downloads anthropic, pydantic, hypothesis, ...

#: The development environment's scripts: pipx and uv come with its ``[dev]`` extra.
DEV_BIN = Path(sys.executable).parent


def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=True, **kwargs
    )


def copy_sources(target: Path) -> None:
    """The distributions' folders and the files they link to (LICENSE)."""
    ignore = shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info", "node_modules", "iac_code_dev"
    )
    for folder in SOURCE_FOLDERS:
        shutil.copytree(ROOT / folder, target / folder, ignore=ignore, symlinks=True)
    shutil.copy2(ROOT / "LICENSE", target / "LICENSE")
    shutil.copy2(ROOT / "README.md", target / "README.md")


def fresh_venv(path: Path, *, with_pip: bool = True) -> Path:
    venv.EnvBuilder(with_pip=with_pip, clear=True).create(path)
    return path / "bin"


def installed(bin_dir: Path) -> dict[str, str]:
    """Distribution name -> version in the venv of ``bin_dir``."""
    # importlib.metadata rather than `pip list`: venvs made by pipx's uv backend have no pip.
    probe = (
        "import importlib.metadata as m, json;"
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    )
    listing = run([str(bin_dir / "python"), "-c", probe])
    packages: dict[str, str] = json.loads(listing.stdout)
    return {name.lower().replace("_", "-"): version for name, version in packages.items()}
