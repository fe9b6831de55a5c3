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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.packaging.install_kit import (
    DEV_BIN,
    INSTALL_TIMEOUT,
    ROOT,
    copy_sources,
    fresh_venv,
    installed,
    run,
)

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
    #: The sdists and wheels of the three distributions.
    wheels: Path


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


def _build(base: Path) -> None:
    copy_sources(base / "src")
    for name in ("generated", "runtime", "conformance"):
        # What a release publishes: the sdist, then the wheel built from that sdist (so an
        # sdist missing a file fails here), each in its own isolated build environment.
        run(
            [str(DEV_BIN / "uv"), "build", "-q", "-o", str(base / "dist"), str(base / "src" / name)]
        )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    base = _once_per_run(tmp_path_factory, "distributions", _build)
    return Built(base / "src", base / "dist")


def _pip_install(bin_dir: Path, built: Built, *requirements: str) -> None:
    """Plain pip into the venv of ``bin_dir``.

    It is the development environment's pip, pointed at that venv (``--python``): the venv
    then needs no pip of its own, whose bootstrapping costs seconds of CPU per venv.
    """
    run(
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
        _pip_install(fresh_venv(folder / "venv", with_pip=False), built, "iac-code-acp")

    return _once_per_run(tmp_path_factory, "agent-venv", make) / "venv" / "bin"


def _agent_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "IAC_CODE_"))}
    env["IAC_CODE_HOME"] = str(home)
    return env


def test_the_agent_venv_holds_only_what_a_stdio_session_imports(agent_bin: Path) -> None:
    found = installed(agent_bin)
    assert {"iac-code-acp", "acp-bindings", "anthropic", "anyio", "pydantic", "httpx"} <= set(found)
    assert NOT_IN_THE_AGENT.isdisjoint(found), NOT_IN_THE_AGENT & set(found)


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
    assert "needs the http extra (missing: starlette, hypercorn)" in lines[0]
    # This venv has no pip (made as uv makes them): the suggestion uses uv, with the extra's
    # requirements from the installed metadata. Running it is left to the README tests,
    # which install the agent as the README says (this venv is shared by the module).
    command = lines[0].split("add it to this installation with: ", 1)[1]
    assert command == (
        f"uv pip install --python {agent_bin / 'python'} 'starlette>=0.40' 'hypercorn>=0.17'"
    )


def test_the_three_sdists_and_wheels_are_built_and_each_holds_the_license(built: Built) -> None:
    import tarfile
    import zipfile

    from iac_code_dev import release_version

    (version,) = set(release_version.read(ROOT).values())
    files = [path for path in built.wheels.iterdir() if path.name.endswith((".whl", ".tar.gz"))]
    names = sorted(path.name for path in files)
    assert names == sorted(
        f"{name}-{version}{suffix}"
        for name in ("acp_bindings", "iac_code_acp", "acp_conformance")
        for suffix in (".tar.gz", "-py3-none-any.whl")
    )
    license_text = (ROOT / "LICENSE").read_bytes()
    for path in files:
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as wheel:
                shipped = [n for n in wheel.namelist() if n.endswith("/licenses/LICENSE")]
                assert len(shipped) == 1, path.name
                assert wheel.read(shipped[0]) == license_text
        else:
            with tarfile.open(path) as sdist:
                members = sdist.getnames()
                assert f"{path.name.removesuffix('.tar.gz')}/LICENSE" in members
                if path.name.startswith("acp_bindings"):  # the schemas travel in the sdist
                    assert any(m.endswith("acp_schema/index.json") for m in members)


def test_the_sdists_install_and_every_command_runs(built: Built, tmp_path: Path) -> None:
    """From the sdists alone (each built into a wheel again by the installer): what a user of
    the package index gets where no wheel fits."""
    from iac_code_dev import release_version

    (version,) = set(release_version.read(ROOT).values())
    sdists = {path.name.split("-")[0]: path for path in built.wheels.glob("*.tar.gz")}
    bin_dir = fresh_venv(tmp_path / "sdist-venv", with_pip=False)
    run(
        [
            str(DEV_BIN / "uv"),
            "pip",
            "install",
            "-q",
            "--python",
            str(bin_dir / "python"),
            f"acp-bindings[validation] @ {sdists['acp_bindings'].as_uri()}",
            str(sdists["iac_code_acp"]),
            str(sdists["acp_conformance"]),
        ]
    )
    found = installed(bin_dir)
    assert {"acp-bindings", "iac-code-acp", "acp-conformance"} <= set(found)
    assert {found[name] for name in ("acp-bindings", "iac-code-acp", "acp-conformance")} == {
        version
    }
    assert run([str(bin_dir / "iac-code"), "--version"]).stdout.strip() == f"iac-code {version}"
    checker = run([str(bin_dir / "acp-conformance"), "--version"]).stdout.strip()
    assert checker == f"acp-conformance {version}"
    probe = "import acp_schema.validation, acp_bindings.v2; print(len(acp_schema.load_index()))"
    assert int(run([str(bin_dir / "python"), "-c", probe]).stdout) > 0


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
    bin_dir = fresh_venv(tmp_path / "checker-venv")
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
    found = installed(bin_dir)
    assert "acp-conformance" in found
    assert {"anthropic", "iac-code-acp", "starlette", "hypercorn"}.isdisjoint(found)

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
    bin_dir = fresh_venv(tmp_path / "bindings-venv", with_pip=False)
    _pip_install(bin_dir, built, "acp-bindings[validation]")
    found = installed(bin_dir)
    assert {"anyio", "anthropic", "httpx", "iac-code-acp", "acp-conformance"}.isdisjoint(found)
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
    shown = run([str(bin_dir / "python"), "-c", probe])
    good_problems, bad_problems = json.loads(shown.stdout)
    assert good_problems == []
    assert bad_problems > 0
