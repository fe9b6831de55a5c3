"""Renders ``acp_bindings/models/__init__.py``: a lazy facade over the model modules.

Importing every model module costs far more than the 100 ms start-up budget allows, so the
package ``__init__`` only holds a name → module table. ``from acp_bindings.models import X``
goes through PEP 562 ``__getattr__`` and imports just the module defining ``X`` (plus whatever
that module itself imports). Type checkers see ordinary imports under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from acp_schema.codegen_common import py_literal


def render_facade(classes: dict[str, str]) -> str:
    """``classes``: public name → module path relative to ``acp_bindings.models``."""
    names = sorted(classes)
    out = [
        '"""Pydantic models for every schema definition, loaded on first use.',
        "",
        "``from acp_bindings.models import NewSessionRequest`` imports only the module that",
        "defines it. Modules mirror ``schema/`` (``defs/content.json`` → ``defs.content``).",
        'Dump with ``model_dump(by_alias=True, exclude_unset=True, mode="json")``.',
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import importlib",
        "from typing import TYPE_CHECKING, Any",
        "",
    ]
    if names:
        out.append("if TYPE_CHECKING:")
        for module in sorted(set(classes.values())):
            out.append(f"    from .{module} import (")
            out += [f"        {name} as {name}," for name in names if classes[name] == module]
            out.append("    )")
        out.append("")
    out += [
        "#: Public name → defining module (relative to this package).",
        "_MODULES: dict[str, str] = {",
    ]
    out += [f"    {py_literal(name)}: {py_literal(classes[name])}," for name in names]
    out += [
        "}",
        "",
        "__all__ = sorted(_MODULES)",
        "",
        "",
        "def __getattr__(name: str) -> Any:",
        "    module = _MODULES.get(name)",
        "    if module is None:",
        '        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")',
        '    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)',
        "    globals()[name] = value",
        "    return value",
        "",
        "",
        "def __dir__() -> list[str]:",
        "    return sorted(set(globals()) | set(_MODULES))",
    ]
    return "\n".join(out)
