"""One version for the three distributions: every place agrees, and one command moves them all.

The places are listed by :mod:`iac_code_dev.release_version`; these tests check that the list
is what packaging really reads (the parsed pyprojects, the imported ``__version__``s, the
exact pins on the bindings) and that ``iac-code-dev version --set`` rewrites every one of them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from iac_code_dev import release_version

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTIONS = ("generated", "runtime", "conformance")


def _project(root: Path, folder: str = ".") -> dict[str, Any]:
    config: dict[str, Any] = tomllib.loads((root / folder / "pyproject.toml").read_text())
    return config["project"]


def _bindings_pins(project: dict[str, Any]) -> list[str]:
    return [r for r in project["dependencies"] if r.startswith("acp-bindings")]


def _what_packaging_reads(root: Path) -> set[str]:
    """Every version a build or a running program takes, read as the tools read it."""
    seen = {_project(root, folder)["version"] for folder in (".", *DISTRIBUTIONS)}
    for folder in ("runtime", "conformance"):
        pins = _bindings_pins(_project(root, folder))
        assert len(pins) == 1, pins
        seen.add(pins[0].split("==", 1)[1])
    return seen


def test_every_place_holds_the_same_version() -> None:
    import acp_conformance
    import iac_code

    versions = release_version.read(ROOT)
    assert len(versions) == len(release_version.PLACES)
    (version,) = set(versions.values())
    assert release_version.VERSION_FORM.fullmatch(version)
    assert _what_packaging_reads(ROOT) == {version}
    assert iac_code.__version__ == acp_conformance.__version__ == version


def _copy_of_the_places(target: Path) -> Path:
    for file in {place.file for place in release_version.PLACES}:
        (target / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / file, target / file)
    return target


def test_setting_a_version_rewrites_every_place(tmp_path: Path) -> None:
    root = _copy_of_the_places(tmp_path)
    changed = release_version.set_version(root, "7.8.9rc1")
    assert sorted(changed) == sorted({place.file for place in release_version.PLACES})
    assert set(release_version.read(root).values()) == {"7.8.9rc1"}
    assert _what_packaging_reads(root) == {"7.8.9rc1"}
    for package in ("runtime/iac_code", "conformance/acp_conformance"):
        namespace: dict[str, Any] = {}
        exec((root / package / "__init__.py").read_text(), namespace)
        assert namespace["__version__"] == "7.8.9rc1"
    # Only the versions moved: every other line of every file is as it was.
    for file in changed:
        before = (ROOT / file).read_text().splitlines()
        after = (root / file).read_text().splitlines()
        assert len(before) == len(after)
        assert sum(a != b for a, b in zip(before, after, strict=True)) <= 2


@pytest.mark.parametrize("bad", ["1.2", "v1.2.3", "1.2.3-beta", "", "1.2.3 "])
def test_a_malformed_version_is_refused_and_nothing_is_written(tmp_path: Path, bad: str) -> None:
    root = _copy_of_the_places(tmp_path)
    with pytest.raises(release_version.VersionError, match="not a release version"):
        release_version.set_version(root, bad)
    assert release_version.read(root) == release_version.read(ROOT)


def test_the_command_lists_the_places_and_fails_when_they_disagree(tmp_path: Path) -> None:
    root = _copy_of_the_places(tmp_path)
    shown, agree = release_version.report(root)
    (version,) = set(release_version.read(ROOT).values())
    assert (
        agree and shown.splitlines()[-1] == f"one version: {version} (its release tag: v{version})"
    )
    init = root / "runtime" / "iac_code" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "9'))
    shown, agree = release_version.report(root)
    assert not agree
    assert shown.splitlines()[-1] == "the places disagree: run iac-code-dev version --set X.Y.Z"


def test_iac_code_dev_version_runs_from_the_development_environment() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "iac_code_dev.cli", "version"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == len(release_version.PLACES) + 1


def test_the_changelog_has_an_unreleased_section_and_one_for_this_version() -> None:
    (version,) = set(release_version.read(ROOT).values())
    headings = re.findall(r"(?m)^## (.+)$", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert headings[0] == "[Unreleased]"
    released = [h for h in headings[1:] if re.fullmatch(r"\[[^\]]+\] - \d{4}-\d{2}-\d{2}", h)]
    assert released == headings[1:], "a released section is '## [X.Y.Z] - YYYY-MM-DD'"
    assert released[0].startswith(f"[{version}] - "), "the newest release is this version"
