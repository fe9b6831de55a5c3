"""No import cycle among the modules of the agent, the bindings and the checker, not even for
typing.

The graph holds every import at module level (inside ``if``/``try`` blocks there too, and
under ``if TYPE_CHECKING:``, because a cycle among annotations is still two modules that
cannot be understood one without the other), but not imports inside functions: those run
later, once every module involved is complete. A submodule importing its own parent package
(``from . import sibling``) is no cycle: the parent is always being imported already. Any
other strongly connected set of modules is reported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Package name → the folder it is installed from.
PACKAGES = {
    "iac_code": ROOT / "runtime" / "iac_code",
    "acp_bindings": ROOT / "generated" / "acp_bindings",
    "acp_schema": ROOT / "schema",
    "acp_conformance": ROOT / "conformance" / "acp_conformance",
    "acp_scripted_llm": ROOT / "conformance" / "acp_scripted_llm",
}


def _modules(package: str, folder: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(folder.rglob("*.py")):
        parts = [package, *path.relative_to(folder).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def _module_level_imports(module: str, path: Path) -> set[str]:
    found: set[str] = set()
    package_parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody):
                    visit(block)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package_parts[: len(package_parts) - node.level + 1]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                found.add(source)
                found.update(f"{source}.{alias.name}" for alias in node.names)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {
        name: path
        for package, folder in PACKAGES.items()
        for name, path in _modules(package, folder)
    }
    graph = {}
    for name, path in paths.items():
        targets = _module_level_imports(name, path) & paths.keys()
        graph[name] = {t for t in targets if t != name and not name.startswith(t + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
    return found


def test_the_agent_and_the_bindings_have_no_import_cycle() -> None:
    graph = import_graph()
    assert "iac_code.versioned_router" in graph and "acp_bindings.shared_errors" in graph
    assert "iac_code.negotiated_peer" in graph["iac_code.versioned_router"]  # edges are seen
    assert cycles(graph) == []


def test_the_checker_has_no_import_cycle() -> None:
    """The registry knows neither the checks nor the scenario fixtures, which import it (it
    once named ``CheckContext`` for typing, and ``check_context`` imports ``Requirement``)."""
    graph = import_graph()
    assert "acp_conformance.requirements" in graph
    assert "acp_conformance.requirements" in graph["acp_conformance.scenarios.check_context"]
    checker = [c for c in cycles(graph) if any(m.startswith("acp_conformance") for m in c)]
    assert checker == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
