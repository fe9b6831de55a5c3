"""Data flows down inside ``iac_code.agent``: the server builds turns, never the reverse.

Read statically from the source, counting every import — also those only made for type
checking, since a type-only import back up is how a call back up starts. Two facts:
only the stdio entry point imports ``iac_code.agent.acp_agent``, and the agent package's
modules import each other without a cycle.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
AGENT = "iac_code.agent"


def _module_name(path: Path, root: Path = RUNTIME) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, root: Path = RUNTIME) -> set[str]:
    """Absolute names of every module the file imports (``from a import b`` counts a.b too)."""
    names: set[str] = set()
    package = _module_name(path if path.name == "__init__.py" else path.parent, root)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _graph() -> dict[str, set[str]]:
    return {_module_name(path): _imports(path) for path in (RUNTIME / "iac_code").rglob("*.py")}


# The layers above the agent: entry points and the protocol-version / transport shells that
# wrap one IacAgent. Everything else (the agent's own modules, tools, llm, store, rpc) sits
# below it and must never reach back up.
LAYERS_ABOVE_THE_AGENT = (
    "iac_code.stdio_runtime",
    "iac_code.versioned_router",
    "iac_code.v2",
    "iac_code.remote",
)


def test_only_the_layers_above_the_agent_import_the_agent_server() -> None:
    importers = {
        module for module, imported in _graph().items() if f"{AGENT}.acp_agent" in imported
    }
    assert "iac_code.stdio_runtime" in importers
    below = {
        module
        for module in importers
        if not any(module == top or module.startswith(top + ".") for top in LAYERS_ABOVE_THE_AGENT)
    }
    assert below == set()


def test_the_agent_modules_import_each_other_without_a_cycle() -> None:
    graph = _graph()
    agent_modules = {name for name in graph if name.startswith(f"{AGENT}.")}
    assert {f"{AGENT}.turn", f"{AGENT}.tool_runner", f"{AGENT}.port"} <= agent_modules
    edges = {name: graph[name] & agent_modules for name in agent_modules}
    try:
        order = list(TopologicalSorter(edges).static_order())
    except CycleError as exc:
        raise AssertionError(f"import cycle in {AGENT}: {' -> '.join(exc.args[1])}") from None
    # The server is built on everything else; the port and the session are leaves for turns.
    assert order[-1] == f"{AGENT}.acp_agent"


def test_turn_helpers_reach_the_agent_only_through_the_port() -> None:
    graph = _graph()
    for helper in ("turn", "tool_runner", "compaction", "client_delegates", "port"):
        imported = graph[f"{AGENT}.{helper}"]
        assert f"{AGENT}.acp_agent" not in imported, helper
        assert "iac_code.rpc.connection" not in imported, helper  # requests go via the port


def test_the_import_reader_sees_type_checking_and_relative_imports(tmp_path: Path) -> None:
    package = tmp_path / "iac_code" / "agent"
    package.mkdir(parents=True)
    source = package / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import session\n"
        "from ..llm.contract import Usage\n"
        "if TYPE_CHECKING:\n"
        "    from iac_code.agent.acp_agent import IacAgent\n"
    )
    imported = _imports(source, tmp_path)
    assert {f"{AGENT}.session", "iac_code.llm.contract", f"{AGENT}.acp_agent"} <= imported
