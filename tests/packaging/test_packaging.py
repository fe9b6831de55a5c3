"""The distribution ships every package and the schemas (checked against the source tree)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_ROOTS = {
    "acp_schema": ROOT / "schema",
    "acp_bindings": ROOT / "generated" / "acp_bindings",
    "iac_code": ROOT / "runtime" / "iac_code",
    "acp_conformance": ROOT / "conformance" / "acp_conformance",
    "acp_scripted_llm": ROOT / "conformance" / "acp_scripted_llm",
    "iac_code_dev": ROOT / "runtime" / "iac_code_dev",
}


def _declared() -> tuple[set[str], dict[str, str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return set(config["packages"]), config["package-dir"]


def test_every_package_directory_is_listed_in_pyproject() -> None:
    declared, _ = _declared()
    found = set()
    for top, folder in PACKAGE_ROOTS.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder)
            if "fixtures" in relative.parts or "__pycache__" in relative.parts:
                continue
            found.add(".".join((top, *relative.parts)))
    assert found - declared == set(), "add these to [tool.setuptools] packages"
    assert declared - found == set(), "these listed packages do not exist"


def test_top_level_packages_map_to_their_folders() -> None:
    _, package_dir = _declared()
    for name, folder in PACKAGE_ROOTS.items():
        assert (ROOT / package_dir[name]).resolve() == folder.resolve()


def test_installed_schema_package_finds_its_json_files() -> None:
    import acp_schema

    index = acp_schema.load_index()
    assert "session/new" in index["methods"]
    assert any(path.startswith("defs/") for path, _ in acp_schema.iter_documents())
