"""The README's quick start stays runnable as written and CI runs its test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    return [line for line in block.strip().splitlines() if line.strip()]


def test_quick_start_commands_make_their_own_virtualenv() -> None:
    checker, tests = _quick_start_commands()
    for command in (checker, tests):
        # Debian/Ubuntu refuse pip into the system Python: each command uses its own venv.
        assert command.startswith("python3 -m venv .venv && .venv/bin/python -m pip install")
    assert "--profile iac-code" in checker and ".venv/bin/iac-code acp" in checker


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    match = re.search(r"README_TEST_COMMAND='(.*)'", ci)
    assert match is not None
    assert match.group(1) == _quick_start_commands()[1]
    assert 'bash -c "$README_TEST_COMMAND"' in ci
