"""No import circle in the checker or its scripted model server, counting every import.

Stricter than ``tests/packaging/test_import_cycles.py``: an import inside a function counts
too, and so does ``importlib.import_module("...")`` with a literal name, because both still
tie two modules together: neither can be understood, moved or tested without the other (the
rule registry once loaded every check by ``importlib``, which hid a 43-module circle). A
submodule importing its own parent package is no circle: the parent is always imported first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.packaging.test_import_cycles import _modules, cycles

ROOT = Path(__file__).resolve().parents[2]
CHECKER = {
    "acp_conformance": ROOT / "conformance" / "acp_conformance",
    "acp_scripted_llm": ROOT / "conformance" / "acp_scripted_llm",
}


def _imported(module: str, path: Path) -> Iterator[str]:
    """Every module ``path`` names in an import, at any depth, or in a literal
    ``import_module`` call (``from a import b`` names ``a`` and, if it is one, ``a.b``)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value


def import_graph(packages: dict[str, Path]) -> dict[str, set[str]]:
    paths = {
        name: path
        for package, folder in packages.items()
        for name, path in _modules(package, folder)
    }
    graph = {}
    for name, path in paths.items():
        targets = set(_imported(name, path)) & paths.keys()
        graph[name] = {t for t in targets if t != name and not name.startswith(t + ".")}
    return graph


def _described(circle: list[str], graph: dict[str, set[str]]) -> str:
    members = set(circle)
    arrows = [f"{a} -> {b}" for a in circle for b in sorted(graph[a] & members)]
    return f"{len(circle)} modules: " + "; ".join(arrows)


def test_the_checker_has_no_import_circle_even_counting_late_and_dynamic_imports() -> None:
    graph = import_graph(CHECKER)
    # the catalogue names every check and judge module; the registry names none of them
    assert "acp_conformance.checks.prompt" in graph["acp_conformance.catalogue"]
    assert "acp_conformance.judges.wire" in graph["acp_conformance.catalogue"]
    assert not any(
        m.startswith("acp_conformance.checks") for m in graph["acp_conformance.requirements"]
    )
    circles = [_described(circle, graph) for circle in cycles(graph)]
    assert circles == []


def test_a_circle_through_a_function_body_or_import_module_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "registry.py").write_text(
        "import importlib\n\ndef load():\n    importlib.import_module('pkg.rules')\n"
    )
    (package / "rules.py").write_text("def rule():\n    from .registry import load\n")
    (package / "apart.py").write_text("from . import rules\n")
    graph = import_graph({"pkg": package})
    assert graph["pkg.registry"] == {"pkg.rules"}
    assert graph["pkg.rules"] == {"pkg.registry"}
    circles = cycles(graph)
    assert circles == [["pkg.registry", "pkg.rules"]]
    assert _described(circles[0], graph) == (
        "2 modules: pkg.registry -> pkg.rules; pkg.rules -> pkg.registry"
    )
