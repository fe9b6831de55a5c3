"""The one version number of the three distributions, in every place packaging reads it.

acp-bindings, iac-code-acp and acp-conformance are released together under one number
(MAINTAINING.md, *Releasing*). Packaging tools read it from several files: each
distribution's ``pyproject.toml``, the agent's and the checker's ``__version__`` (what
``--version`` and ``initialize`` show), the agent's and the checker's exact pin on the
bindings, and the development environment's ``pyproject.toml``. :data:`PLACES` lists them;
``iac-code-dev version`` shows them (exit 1 when they disagree) and ``iac-code-dev version
--set X.Y.Z`` rewrites all of them, so no release can ship two numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: Versions this project releases: X.Y.Z, optionally a pre-release (a1, b2, rc1) or .devN.
VERSION_FORM = re.compile(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?(?:\.dev\d+)?")

_PROJECT_VERSION = r'(?m)^version = "([^"]*)"'
_DUNDER_VERSION = r'(?m)^__version__ = "([^"]*)"'


@dataclass(frozen=True)
class Place:
    """One occurrence of the version: a file (relative to the repository) and a pattern
    whose single group is the version; it must match exactly once."""

    file: str
    pattern: str
    what: str

    @property
    def label(self) -> str:
        return f"{self.file} ({self.what})"


PLACES: tuple[Place, ...] = (
    Place("generated/pyproject.toml", _PROJECT_VERSION, "acp-bindings"),
    Place("runtime/pyproject.toml", _PROJECT_VERSION, "iac-code-acp"),
    Place("runtime/pyproject.toml", r'"acp-bindings==([^"]*)"', "its pin on acp-bindings"),
    Place("runtime/iac_code/__init__.py", _DUNDER_VERSION, "iac_code.__version__"),
    Place("conformance/pyproject.toml", _PROJECT_VERSION, "acp-conformance"),
    Place(
        "conformance/pyproject.toml",
        r'"acp-bindings\[validation\]==([^"]*)"',
        "its pin on acp-bindings",
    ),
    Place(
        "conformance/acp_conformance/__init__.py", _DUNDER_VERSION, "acp_conformance.__version__"
    ),
    Place("pyproject.toml", _PROJECT_VERSION, "the development environment"),
)


class VersionError(Exception):
    """A place that does not hold exactly one version, or a version of the wrong form."""


def _match(root: Path, place: Place) -> tuple[str, re.Match[str]]:
    text = (root / place.file).read_text(encoding="utf-8")
    found = list(re.finditer(place.pattern, text))
    if len(found) != 1:
        raise VersionError(f"{place.label}: expected one version, found {len(found)}")
    return text, found[0]


def read(root: Path) -> dict[str, str]:
    """Each place's label and the version written there."""
    return {place.label: _match(root, place)[1].group(1) for place in PLACES}


def set_version(root: Path, version: str) -> list[str]:
    """Write ``version`` into every place; the files it changed (each written once)."""
    if not VERSION_FORM.fullmatch(version):
        raise VersionError(f"{version!r} is not a release version (X.Y.Z, e.g. 0.2.0 or 1.0.0rc1)")
    texts: dict[str, str] = {}
    for place in PLACES:
        if place.file not in texts:
            texts[place.file] = (root / place.file).read_text(encoding="utf-8")
        _match(root, place)  # each pattern matches exactly once before anything is written
    for place in PLACES:
        match = next(re.finditer(place.pattern, texts[place.file]))
        text = texts[place.file]
        texts[place.file] = text[: match.start(1)] + version + text[match.end(1) :]
    changed = []
    for file, text in texts.items():
        path = root / file
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(file)
    return changed


def report(root: Path) -> tuple[str, bool]:
    """Printable lines (one per place) and whether every place holds the same version."""
    versions = read(root)
    width = max(map(len, versions))
    lines = [f"{label:<{width}}  {version}" for label, version in versions.items()]
    agree = len(set(versions.values())) == 1
    if agree:
        version = next(iter(versions.values()))
        lines.append(f"one version: {version} (its release tag: v{version})")
    else:
        lines.append("the places disagree: run iac-code-dev version --set X.Y.Z")
    return "\n".join(lines), agree


#: The repository this development tool runs from (runtime/iac_code_dev/ is two levels down).
REPOSITORY = Path(__file__).resolve().parents[2]
