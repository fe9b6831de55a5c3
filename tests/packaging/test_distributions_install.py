"""Each distribution builds, installs on its own into a fresh venv and does its job there.

The sources are copied to a temporary folder first, so a stale ``build/`` folder in the
checkout can never leak into a wheel and the checkout is left untouched. Installs come from
the package index (dependencies) and the freshly built wheels (ours): this is what a user
who follows the README gets, minus the editable development install.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("schema", "generated", "runtime", "conformance")
INSTALL_TIMEOUT = 600.0  # a cold pip cache downloads anthropic, pydantic, hypothesis, ...

#: Imported only by the checker, the HTTP transport or the development tools: an agent that
#: serves stdio must not carry them (compared with `pip list` names, normalised).
NOT_IN_THE_AGENT = {
    "acp-conformance",
    "jsonschema",
    "referencing",
    "hypothesis",
    "hypothesis-jsonschema",
    "starlette",
    "hypercorn",
    "h2",
    "wsproto",
    "websockets",
    "pytest",
}

pytestmark = pytest.mark.subprocess


@dataclass(frozen=True)
class Built:
    sources: Path
    wheels: Path


def _run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=True, **kwargs
    )


def _copy_sources(target: Path) -> None:
    ignore = shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info", "node_modules", "iac_code_dev"
    )
    for folder in SOURCE_FOLDERS:
        shutil.copytree(ROOT / folder, target / folder, ignore=ignore)


def _once_per_run(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name``, made by ``make`` once for the whole test run.

    Under pytest-xdist each worker has its own temporary root; their common parent is the
    run's, so the wheels and the agent venv are built once (under a lock) and every worker's
    tests of this module can run side by side instead of queueing on one worker.
    """
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = shared / name, shared / f"{name}.done"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


#: The development environment's scripts: pipx and uv come with its ``[dev]`` extra.
DEV_BIN = Path(sys.executable).parent


def _build(base: Path) -> None:
    _copy_sources(base / "src")
    for name in ("generated", "runtime", "conformance"):
        # Each in its own isolated build environment, from the copied sources.
        _run(
            [
                str(DEV_BIN / "uv"),
                "build",
                "-q",
                "--wheel",
                "-o",
                str(base / "wheels"),
                str(base / "src" / name),
            ]
        )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    base = _once_per_run(tmp_path_factory, "distributions", _build)
    return Built(base / "src", base / "wheels")


def _fresh_venv(path: Path, *, with_pip: bool = True) -> Path:
    venv.EnvBuilder(with_pip=with_pip, clear=True).create(path)
    return path / "bin"


def _installed(bin_dir: Path) -> dict[str, str]:
    # importlib.metadata rather than `pip list`: venvs made by pipx's uv backend have no pip.
    probe = (
        "import importlib.metadata as m, json;"
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    )
    listing = _run([str(bin_dir / "python"), "-c", probe])
    packages: dict[str, str] = json.loads(listing.stdout)
    return {name.lower().replace("_", "-"): version for name, version in packages.items()}


def _pip_install(bin_dir: Path, built: Built, *requirements: str) -> None:
    """Plain pip into the venv of ``bin_dir``.

    It is the development environment's pip, pointed at that venv (``--python``): the venv
    then needs no pip of its own, whose bootstrapping costs seconds of CPU per venv.
    """
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(bin_dir / "python"),
            "install",
            "-q",
            "--find-links",
            str(built.wheels),
            *list(requirements),
        ]
    )


@pytest.fixture(scope="module")
def agent_bin(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    def make(folder: Path) -> None:
        _pip_install(_fresh_venv(folder / "venv", with_pip=False), built, "iac-code-acp")

    return _once_per_run(tmp_path_factory, "agent-venv", make) / "venv" / "bin"


def _agent_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "IAC_CODE_"))}
    env["IAC_CODE_HOME"] = str(home)
    return env


def test_the_agent_venv_holds_only_what_a_stdio_session_imports(agent_bin: Path) -> None:
    installed = _installed(agent_bin)
    assert {"iac-code-acp", "acp-bindings", "anthropic", "anyio", "pydantic", "httpx"} <= set(
        installed
    )
    assert NOT_IN_THE_AGENT.isdisjoint(installed), NOT_IN_THE_AGENT & set(installed)


def test_the_installed_agent_answers_initialize(agent_bin: Path, tmp_path: Path) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    served = subprocess.run(
        [str(agent_bin / "iac-code"), "acp"],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=_agent_env(tmp_path),
        cwd=tmp_path,
    )
    assert served.returncode == 0, served.stderr
    answer = json.loads(served.stdout.splitlines()[0])
    assert answer["id"] == 1
    assert answer["result"]["protocolVersion"] == 1


def test_the_http_transport_without_its_extra_is_one_clear_line(
    agent_bin: Path, tmp_path: Path
) -> None:
    served = subprocess.run(
        [str(agent_bin / "iac-code"), "acp", "--transport", "http", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_agent_env(tmp_path),
        stdin=subprocess.DEVNULL,
    )
    assert served.returncode == 2
    lines = served.stderr.strip().splitlines()
    assert len(lines) == 1, served.stderr
    assert "iac-code-acp[http]" in lines[0]


def _expand(value: str, inputs: dict[str, str], action_path: Path) -> str:
    """What the runner does to ``${{ ... }}`` in a step's ``env`` and ``with``."""
    for name, given in inputs.items():
        value = value.replace("${{ inputs." + name + " }}", given)
    return value.replace("${{ github.action_path }}", str(action_path))


def test_the_checker_action_installs_the_checker_alone_and_passes_the_agent(
    built: Built, agent_bin: Path, tmp_path: Path
) -> None:
    """The GitHub Action's shell steps, run here as a runner would run them; the suite's one
    run of the whole checker against our own agent.

    Its install step puts the checker (from the copied sources, as the action installs from
    its own folder) into a fresh venv that must not gain the agent or anthropic; its run step
    checks the installed agent and writes the JUnit, JSON and HTML reports the upload step
    keeps. The ``uses:`` steps (setup-python, upload-artifact) need GitHub; this test checks
    what they are given instead.
    """
    import yaml

    action = yaml.safe_load((ROOT / "conformance" / "action.yml").read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(
        {
            "agent-command": f"{agent_bin / 'iac-code'} acp",
            "profile": "iac-code",
            "llm": "anthropic",
            # A longer bound on each wait: shared CI machines can be heavily loaded, and the
            # bound is not about speed.
            "args": "--timeout 30",
        }
    )
    bin_dir = _fresh_venv(tmp_path / "checker-venv")
    workdir = tmp_path / "run"
    workdir.mkdir()
    output_file = tmp_path / "github-output"
    env = _agent_env(tmp_path / "home")
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["GITHUB_OUTPUT"] = str(output_file)
    env.pop("VIRTUAL_ENV", None)
    ran: list[str] = []
    completed: dict[str, subprocess.CompletedProcess[str]] = {}
    for step in action["runs"]["steps"]:
        if "uses" in step:
            ran.append(str(step["uses"]).split("@")[0])
            continue
        assert step["shell"] == "bash"
        step_env = dict(env)
        for key, value in (step.get("env") or {}).items():
            step_env[key] = _expand(str(value), inputs, built.sources / "conformance")
        completed[step["name"]] = subprocess.run(
            ["bash", "-c", step["run"]],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            env=step_env,
            cwd=workdir,
        )
        ran.append(step["name"])
    assert ran == [
        "actions/setup-python",
        "Install acp-conformance",
        "Run acp-conformance",
        "actions/upload-artifact",
    ]
    install = completed["Install acp-conformance"]
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-3000:]
    installed = _installed(bin_dir)
    assert "acp-conformance" in installed
    assert {"anthropic", "iac-code-acp", "starlette", "hypercorn"}.isdisjoint(installed)

    checked = completed["Run acp-conformance"]
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    lines = checked.stdout.strip().splitlines()
    # --format github: the verdict as a notice last, after the table's own verdict line.
    assert lines[-1].startswith("::notice title=acp-conformance::CONFORMANT")
    assert not [line for line in lines if line.startswith("::error")]
    assert output_file.read_text().strip() == "exit-code=0"

    upload = action["runs"]["steps"][-1]
    assert upload["if"] == "always()"  # the reports matter most when the run failed
    reports = workdir / _expand(str(upload["with"]["path"]), inputs, built.sources)
    assert sorted(path.name for path in reports.iterdir()) == [
        "junit.xml",
        "report.html",
        "report.json",
    ]
    # This is also the suite's whole-checker run against our own agent (the quick start's
    # command, from the wheels): every requirement judged, nothing blocking failed.
    report = json.loads((reports / "report.json").read_text())
    assert report["status"] == "conformant"
    verdicts = [requirement["verdict"] for requirement in report["requirements"]]
    assert "harness-error" not in verdicts, report["summary"]
    # SHOULD verdicts bounded by time (exiting within the shutdown grace) can fail on a loaded
    # machine; nothing that blocks may.
    blocking = [
        r["id"]
        for r in report["requirements"]
        if r["verdict"] == "fail" and r["tier"] in ("MUST", "CAPABILITY")
    ]
    assert blocking == [], report["summary"]
    assert verdicts.count("pass") >= 90


def test_the_bindings_install_alone_and_validate_a_message(built: Built, tmp_path: Path) -> None:
    bin_dir = _fresh_venv(tmp_path / "bindings-venv", with_pip=False)
    _pip_install(bin_dir, built, "acp-bindings[validation]")
    installed = _installed(bin_dir)
    assert {"anyio", "anthropic", "httpx", "iac-code-acp", "acp-conformance"}.isdisjoint(installed)
    probe = """
import json
from acp_bindings.v2.models import InitializeRequest
from acp_schema.validation import validate_message
params = {"protocolVersion": 2, "info": {"name": "probe", "version": "1"}}
InitializeRequest.model_validate(params)
good = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
bad = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "x"}}
print(json.dumps([validate_message(good, version=2), len(validate_message(bad, version=2))]))
"""
    shown = _run([str(bin_dir / "python"), "-c", probe])
    good_problems, bad_problems = json.loads(shown.stdout)
    assert good_problems == []
    assert bad_problems > 0


@pytest.fixture(scope="module")
def installers() -> Path:
    """Where pipx and uv are: the development environment has both."""
    return DEV_BIN


def test_pipx_installs_the_agent_and_the_checker_as_the_readme_says(
    built: Built, installers: Path, tmp_path: Path
) -> None:
    env = dict(os.environ, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"))
    generated, runtime = built.sources / "generated", built.sources / "runtime"
    # The README's commands; --preinstall paths are taken relative to pipx's venv: absolute.
    pipx = str(installers / "pipx")
    _run([pipx, "install", "--preinstall", str(generated), str(runtime)], env=env)
    _run(
        [
            pipx,
            "install",
            "--preinstall",
            f"{generated}[validation]",
            str(built.sources / "conformance"),
        ],
        env=env,
    )
    shown = _run([str(tmp_path / "bin" / "iac-code"), "--version"])
    assert shown.stdout.strip() == "iac-code 0.1.0"
    checker = _run([str(tmp_path / "bin" / "acp-conformance"), "--version"])
    assert "0.1.0" in checker.stdout
    checker_python = tmp_path / "pipx" / "venvs" / "acp-conformance" / "bin"
    assert "anthropic" not in _installed(checker_python)


def test_uv_tool_installs_the_agent_and_the_checker_from_their_folders(
    built: Built, installers: Path, tmp_path: Path
) -> None:
    env = dict(
        os.environ,
        UV_TOOL_DIR=str(tmp_path / "tools"),
        UV_TOOL_BIN_DIR=str(tmp_path / "bin"),
    )
    for folder in ("./runtime", "./conformance"):
        _run([str(installers / "uv"), "tool", "install", folder], env=env, cwd=built.sources)
    assert _run([str(tmp_path / "bin" / "iac-code"), "--version"]).stdout.startswith("iac-code ")
    checker = _run([str(tmp_path / "bin" / "acp-conformance"), "--version"])
    assert "0.1.0" in checker.stdout
