"""Which package may import which: each distribution stands on its own.

``iac_code`` (the agent) imports neither the checker nor the scripted model server nor the
development tools; the checker (``acp_conformance``, with ``acp_scripted_llm``) never imports
the agent; ``iac_code_dev`` (bench, demo, test doubles) may import anything.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# Imports every module of a package in a fresh interpreter and prints the top-level packages
# that ended up in ``sys.modules``: a lazily imported module counts only if it is imported,
# so this sees exactly what importing the package's code pulls in.
_PROBE = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys
    package = importlib.import_module(sys.argv[1])
    names = [sys.argv[1]]
    for info in pkgutil.walk_packages(package.__path__, prefix=sys.argv[1] + "."):
        importlib.import_module(info.name)
        names.append(info.name)
    print(json.dumps({"modules": names, "top": sorted({m.split(".")[0] for m in sys.modules})}))
    """
)


def _imported_by(package: str) -> dict[str, list[str]]:
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE, package],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, list[str]] = json.loads(probe.stdout)
    return result


def test_the_agent_imports_no_checker_and_no_development_tool() -> None:
    imported = _imported_by("iac_code")
    assert "iac_code.remote.serve" in imported["modules"]  # every module was imported
    forbidden = {"acp_conformance", "acp_scripted_llm", "iac_code_dev"}
    assert forbidden.isdisjoint(imported["top"])


def test_the_checker_never_imports_the_agent() -> None:
    imported = _imported_by("acp_conformance")
    assert "acp_conformance.cli" in imported["modules"]
    assert {"iac_code", "iac_code_dev", "anthropic"}.isdisjoint(imported["top"])


def test_the_scripted_llm_server_depends_on_no_project_package() -> None:
    imported = _imported_by("acp_scripted_llm")
    assert {"iac_code", "acp_conformance", "acp_bindings", "acp_schema"}.isdisjoint(imported["top"])
