"""Shared pytest configuration: anyio runs async tests on asyncio; the Python processes the
tests start may cache compiled modules."""

import os
import re
import sys
from pathlib import Path

import pytest

# The suite starts hundreds of Python processes (agents, checkers, fixture agents and
# clients). Where the environment says PYTHONDONTWRITEBYTECODE (as these machines' does),
# each of them compiled the project's modules from source again — the generated bindings
# alone are ~150 modules. Writing __pycache__ (ignored by git, never packaged) saves that.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


#: The project's source folders (and the tests', whose fixture agents run as processes of
#: their own), compiled once before the tests start.
SOURCE_FOLDERS = ("generated", "runtime", "conformance", "tests")


#: Installed packages inside the source folders (npm fixtures, build output) are not ours.
_SKIPPED = re.compile(r"[/\\](node_modules|build|\.venv[^/\\]*)[/\\]")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the project's modules once, up front (the controller only, not every worker).

    On a fresh checkout nothing is compiled yet, and the first minute of the run starts
    dozens of agents, checkers and fixture processes at once, each compiling the same few
    hundred modules (the generated bindings alone are ~150) until one of them has written
    ``__pycache__``. Measured on a fresh clone: 226 to 235 s for the suite without this,
    218 s with it (206 s on a second run).
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import compileall

    root = Path(__file__).resolve().parents[1]
    for folder in SOURCE_FOLDERS:
        compileall.compile_dir(root / folder, quiet=1, workers=0, rx=_SKIPPED)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


#: Tests that take from ten seconds to a minute each (building and installing the wheels, full
#: checker runs against a real agent, waits the checker must sit out). pytest-xdist hands out
#: tests in collection order, and these sit late in it (tests/packaging is last): started
#: first, the thousands of quick tests fill the workers around them instead of the run ending
#: on one of them.
STARTED_FIRST = (
    "tests/packaging/test_distributions_install.py",
    "tests/packaging/test_readme_install_commands.py",
    "tests/checker/checks/test_conformance_preflight.py",
    "tests/checker/checks/test_conformance_wait_bounds.py",
    "tests/checker/remote/test_iac_code_remote_is_conformant.py",
    "tests/agent/process/test_integration_search_bounds.py",
    "tests/bindings/codegen/test_codegen_versions.py",
)


#: Modules whose tests wait on real processes, threads or deadlines: the ones a loaded machine
#: turned red before their bounds were made generous (issue 32). They carry the ``timing``
#: marker, and .ci/run also runs ``pytest -m timing`` beside two busy loops, so a bound that
#: depends on speed shows up there first. About 30 s on an idle machine, a minute or so under
#: the hogs.
TIMING_SENSITIVE = (
    "tests/agent/protocol_v2/test_v1_updates_skip_v2.py",
    "tests/agent/turn_tools/test_agent_tools_process.py",
    "tests/agent/handlers/test_agent_cancel.py",
    "tests/agent/llm/test_llm_preload.py",
    "tests/agent/process/test_integration_lifecycle.py",
    "tests/agent/process/test_integration_startup.py",
    "tests/agent/process/test_integration_faults.py",
    "tests/agent/remote/test_remote_units.py",
    "tests/agent/store/test_store_index_rebuild.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(STARTED_FIRST))  # a stable sort
    for item in items:
        if item.nodeid.startswith(TIMING_SENSITIVE):
            item.add_marker(pytest.mark.timing)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """Every skip for missing reference material is reported at one place.

    pytest folds skips by (file, line, reason); tests that skip from a fixture report their
    own line, so hundreds of identical reasons came out as dozens of lines. Pointing them
    all at ``acp_schema.reference`` leaves one line saying what to fetch and how.
    """
    report: pytest.TestReport = yield
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        if "reference material not found" in reason:
            from acp_schema import reference

            code = reference.require.__code__
            report.longrepr = (code.co_filename, code.co_firstlineno, reason)
    return report
