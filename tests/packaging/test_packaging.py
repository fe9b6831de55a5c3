"""Each distribution ships exactly its packages; the development environment is their union.

Three distributions are published from this repository, each with its own pyproject.toml:
``generated/`` (acp-bindings: acp_schema + acp_bindings), ``runtime/`` (iac-code-acp: the
agent) and ``conformance/`` (acp-conformance: the checker and its scripted model server).
The root pyproject.toml is the development environment: the same packages (plus the
development tools, ``iac_code_dev``) mapped to the same folders, editable.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: distribution folder -> {top-level package: its folder}
DISTRIBUTIONS: dict[str, dict[str, Path]] = {
    "generated": {
        "acp_schema": ROOT / "schema",
        "acp_bindings": ROOT / "generated" / "acp_bindings",
    },
    "runtime": {"iac_code": ROOT / "runtime" / "iac_code"},
    "conformance": {
        "acp_conformance": ROOT / "conformance" / "acp_conformance",
        "acp_scripted_llm": ROOT / "conformance" / "acp_scripted_llm",
    },
}
DEVELOPMENT_ONLY = {"iac_code_dev": ROOT / "runtime" / "iac_code_dev"}


def _config(folder: Path) -> dict[str, Any]:
    return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))


def _package_dirs(folder: Path, config: dict[str, Any]) -> dict[str, Path]:
    mapping = config["tool"]["setuptools"].get("package-dir", {})
    tops = {name.split(".")[0] for name in config["tool"]["setuptools"]["packages"]}
    return {top: (folder / mapping.get(top, top)).resolve() for top in tops}


def _packages_under(roots: dict[str, Path]) -> set[str]:
    found = set()
    for top, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder)
            if "fixtures" in relative.parts or "__pycache__" in relative.parts:
                continue
            found.add(".".join((top, *relative.parts)))
    return found


def _requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match is not None, requirement
    return match.group(0).lower().replace("_", "-")


@pytest.mark.parametrize("folder", sorted(DISTRIBUTIONS))
def test_a_distribution_lists_exactly_the_packages_in_its_folders(folder: str) -> None:
    config = _config(ROOT / folder)
    declared = set(config["tool"]["setuptools"]["packages"])
    assert _package_dirs(ROOT / folder, config) == {
        top: path.resolve() for top, path in DISTRIBUTIONS[folder].items()
    }
    found = _packages_under(DISTRIBUTIONS[folder])
    assert found - declared == set(), f"add these to {folder}/pyproject.toml packages"
    assert declared - found == set(), "these listed packages do not exist"


def test_the_development_environment_is_the_union_of_the_distributions() -> None:
    root = _config(ROOT)
    expected_roots = {top: path for dist in DISTRIBUTIONS.values() for top, path in dist.items()}
    expected_roots |= DEVELOPMENT_ONLY
    assert _package_dirs(ROOT, root) == {k: v.resolve() for k, v in expected_roots.items()}
    assert set(root["tool"]["setuptools"]["packages"]) == _packages_under(expected_roots)
    ours = {_config(ROOT / folder)["project"]["name"] for folder in DISTRIBUTIONS}
    needed = {
        _requirement_name(requirement)
        for folder in DISTRIBUTIONS
        for requirement in _config(ROOT / folder)["project"]["dependencies"]
    } | {
        _requirement_name(requirement)
        for folder in DISTRIBUTIONS
        for extra in _config(ROOT / folder)["project"].get("optional-dependencies", {}).values()
        for requirement in extra
    }
    needed -= ours
    declared = {_requirement_name(r) for r in root["project"]["dependencies"]}
    assert needed - declared == set(), "the development environment lacks these dependencies"
    assert declared - needed == set(), "no distribution needs these: remove them or add them"


def test_the_agent_distribution_name_is_not_the_other_program() -> None:
    # "iac-code" on the package index is an unrelated program: an install by that name
    # must never be the documented way to get this agent.
    assert _config(ROOT / "runtime")["project"]["name"] == "iac-code-acp"
    assert _config(ROOT / "runtime")["project"]["scripts"] == {"iac-code": "iac_code.cli:main"}


def test_installed_schema_package_finds_its_json_files() -> None:
    import acp_schema

    index = acp_schema.load_index()
    assert "session/new" in index["methods"]
    assert any(path.startswith("defs/") for path, _ in acp_schema.iter_documents())
