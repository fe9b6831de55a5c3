"""Which package may import which: the agent runtime stands on its own.

``iac_code`` is what users install to run an agent; the checker (``acp_conformance``) drives
agents from outside and may depend on the runtime's helpers, never the other way round. The
scripted LLM server is shared by both, so it lives in ``acp_scripted_llm``.
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


def test_the_runtime_never_imports_the_checker() -> None:
    imported = _imported_by("iac_code")
    assert "iac_code.bench.llm" in imported["modules"]  # the scripted-server users were loaded
    assert "iac_code.llm.fake" in imported["modules"]
    assert "acp_conformance" not in imported["top"]


def test_the_scripted_llm_server_depends_on_no_project_package() -> None:
    imported = _imported_by("acp_scripted_llm")
    assert {"iac_code", "acp_conformance", "acp_bindings", "acp_schema"}.isdisjoint(imported["top"])
