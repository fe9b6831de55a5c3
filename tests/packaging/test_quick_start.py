"""The README's quick start stays runnable as written, and CI runs its test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    return [line for line in block.strip().splitlines() if line.strip()]


def test_the_quick_start_is_two_commands_each_in_its_own_virtualenv() -> None:
    checker, tests = _quick_start_commands()
    # Debian/Ubuntu refuse pip into the system Python: each command makes its own venv.
    assert checker.startswith("python3 -m venv .venv-try && .venv-try/bin/python -m pip install")
    assert tests.startswith("python3 -m venv .venv && .venv/bin/python -m pip install -e")


def test_the_main_job_installs_the_published_distributions_not_the_workspace() -> None:
    checker, _ = _quick_start_commands()
    install = checker.split("&&")[1].split()
    assert install[-3:] == ["./generated", "./runtime", "./conformance"]
    assert "-e" not in install
    assert "--profile iac-code" in checker and "--llm anthropic" in checker
    assert checker.endswith("-- .venv-try/bin/iac-code acp")


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    match = re.search(r"README_TEST_COMMAND='(.*)'", ci)
    assert match is not None
    assert match.group(1) == _quick_start_commands()[1]
    assert 'bash -c "$README_TEST_COMMAND"' in ci


def test_the_readme_stays_short_and_cites_nothing_a_user_lacks() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "SPEC" not in readme and "../shared" not in readme
