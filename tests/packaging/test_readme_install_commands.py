"""Every install command of every README works as written, from the folder of its README.

The commands are read from the READMEs' ``sh`` blocks (every line that starts with an
installer; the quick start has tests of its own) and run by bash, unchanged, in a copy of
the sources: HOME, pipx's and uv's tool folders point into the test's temporary folder, the
package caches stay the machine's. Each command must leave its program working (``--version``
answers the release version, the bindings import); an agent installed as a tool is also asked
for the http transport it lacks, and the one-line message's command must add it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from iac_code_dev import release_version

from tests.packaging.install_kit import (
    DEV_BIN,
    INSTALL_TIMEOUT,
    ROOT,
    copy_sources,
    fresh_venv,
    run,
)

pytestmark = pytest.mark.subprocess

READMES = ("README.md", "runtime/README.md", "conformance/README.md", "generated/README.md")
INSTALLERS = ("pipx install", "uv tool install", "pip install", "python3 -m venv")


def install_commands(readme: str) -> list[str]:
    text = (ROOT / readme).read_text(encoding="utf-8")
    if "## Quick start" in text:  # tested by test_quick_start and the checker action's test
        before, after = text.split("## Quick start", 1)
        text = before + after.split("\n## ", 1)[1]
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.startswith(INSTALLERS)]


CASES = [(readme, command) for readme in READMES for command in install_commands(readme)]


def test_every_readme_has_install_commands() -> None:
    assert {readme for readme, _ in CASES} == set(READMES)
    assert len(CASES) >= 8, CASES


def _bash(command: str, cwd: Path, env: dict[str, str]) -> None:
    """Run ``command`` as a user would type it, in ``cwd``; it must succeed."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


def _programs(readme: str, command: str) -> list[str]:
    """What ``command`` of ``readme`` installs: the agent, the checker, or the bindings."""
    folder = str(Path(readme).parent)
    mentioned = command if folder == "." else f"{folder} {command}"
    if "runtime" in mentioned:
        return ["iac-code"]
    if "conformance" in mentioned:
        return ["acp-conformance"]
    return []


#: e.g. ``runtime/README.md:2:uv``: the README, the command's place in it, its installer.
IDS = [
    f"{readme}:{[r for r, _ in CASES[: n + 1]].count(readme)}:{command.split()[0]}"
    for n, (readme, command) in enumerate(CASES)
]


@pytest.mark.parametrize(("readme", "command"), CASES, ids=IDS)
def test_the_readme_command_installs_a_working_program(
    readme: str, command: str, tmp_path: Path
) -> None:
    (version,) = set(release_version.read(ROOT).values())
    sources = tmp_path / "src"
    copy_sources(sources)
    home, tools_bin = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    # A project's own environment comes first on PATH (where `pip install` installs), then
    # the development environment's pipx and uv.
    project = fresh_venv(tmp_path / "project-venv") if command.startswith("pip install") else None
    path = [str(project)] if project else []
    env = {
        **{k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
        "HOME": str(home),
        "XDG_CACHE_HOME": str(Path.home() / ".cache"),  # downloads come from the usual cache
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tools_bin),
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(tools_bin),
        "PATH": os.pathsep.join([*path, str(DEV_BIN), os.environ.get("PATH", "")]),
    }
    _bash(command, sources / Path(readme).parent, env)

    places = [tools_bin, home / ".venvs" / "iac" / "bin"]
    for program in _programs(readme, command):
        found = [place / program for place in places if (place / program).exists()]
        assert len(found) == 1, (program, places)
        shown = run([str(found[0]), "--version"], env=env).stdout.strip()
        assert shown == f"{program} {version}"
        if program == "iac-code":
            _the_http_extra_message_names_a_command_that_works(found[0], env, tmp_path)
    if readme == "generated/README.md":
        assert project is not None
        probe = "import acp_schema.validation, acp_bindings.v2; print(len(acp_schema.load_index()))"
        assert int(run([str(project / "python"), "-c", probe]).stdout) > 0


def _the_http_extra_message_names_a_command_that_works(
    agent: Path, env: dict[str, str], tmp_path: Path
) -> None:
    def ask() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(agent), "acp", "--transport", "http", "--port", "0"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**env, "IAC_CODE_HOME": str(tmp_path / "agent-home")},
            stdin=subprocess.DEVNULL,
            check=False,
        )

    refused = ask()
    assert refused.returncode == 2, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    command = line.split("add it to this installation with: ", 1)[1]
    # Run from somewhere unrelated to the checkout: the command must not depend on it.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _bash(command, elsewhere, env)
    words = shlex.split(command)
    python = words[0] if words[1:3] == ["-m", "pip"] else words[words.index("--python") + 1]
    run([python, "-c", "import starlette, hypercorn"])
