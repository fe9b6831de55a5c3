"""The peers table is complete, consistent, and uses only placeholders that get filled."""

from __future__ import annotations

import json
import re
from pathlib import Path

import acp_conformance.peers
import pytest
from acp_conformance.config import LLM_APIS, RunConfig, agent_command, agent_environment
from acp_conformance.peers.agents import (
    CHECKER_TEMPLATES,
    INSTALL_PLACEHOLDERS,
    OWN_AGENT,
    PEERS,
    PEERS_BY_NAME,
    REMOTE_PEERS,
    UNREACHABLE_URL,
    NpmInstall,
    PipInstall,
)
from acp_conformance.peers.layout import node22_bin, resolve
from acp_conformance.vocabularies import VOCABULARIES

PLACEHOLDER = re.compile(r"\{([a-z0-9_]+)\}")
ALL_ROWS = (OWN_AGENT, *PEERS, *REMOTE_PEERS)
EXPECTED = {
    "iac-code-0.16.0",
    "sdk-echo",
    "ts-sdk-echo",
    "gemini-cli",
    "qwen-code",
    "claude-agent-acp",
    "codex-acp",
    "opencode",
    # Checked over the remote transport (--url): the TS SDK's AcpServer and our own server.
    "ts-sdk-http",
    "ts-sdk-ws",
    "iac-code-http",
    "iac-code-ws",
}


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def test_every_brief_peer_is_in_the_table_once() -> None:
    names = [peer.name for peer in ALL_ROWS]
    assert len(names) == len(set(names))
    assert set(PEERS_BY_NAME) == EXPECTED


@pytest.mark.parametrize("peer", PEERS, ids=lambda p: p.name)
def test_peer_has_install_run_and_llm_mode(peer) -> None:
    assert isinstance(peer.install, PipInstall | NpmInstall)
    assert (
        peer.install.requirements if isinstance(peer.install, PipInstall) else peer.install.packages
    )
    # The TS SDK echo agent runs the cache's Node 22 on a script shipped with the checker.
    assert peer.command and peer.command[0].startswith(("{peer_dir}/", "{node22_bin}/"))
    assert peer.installed_marker.startswith("{peer_dir}/")
    assert peer.llm in LLM_APIS
    assert peer.tools in VOCABULARIES
    assert peer.title


@pytest.mark.parametrize("peer", ALL_ROWS, ids=lambda p: p.name)
def test_placeholders_are_ones_that_get_filled(peer) -> None:
    # The checker fills its templates in the environment and the argv (codex-acp names its
    # model endpoint in an argument), and a remote peer's {port} (the checker starts that
    # server per agent on a free port); the install marker gets install placeholders only.
    port = {"port"} if peer.transport != "stdio" else set()
    for part in peer.command:
        assert placeholders(part) <= INSTALL_PLACEHOLDERS | CHECKER_TEMPLATES | port, part
    assert placeholders(peer.installed_marker) <= INSTALL_PLACEHOLDERS
    for _, value in peer.env:
        assert placeholders(value) <= INSTALL_PLACEHOLDERS | CHECKER_TEMPLATES, value


@pytest.mark.parametrize("peer", ALL_ROWS, ids=lambda p: p.name)
def test_llm_mode_matches_the_environment(peer) -> None:
    used = set().union(*(placeholders(value) for _, value in peer.env)) if peer.env else set()
    talks_to_llm = bool(used & {"llm_url", "llm_url_v1"})
    assert talks_to_llm == (peer.llm != "none")
    if peer.llm == "none" and peer.name != "sdk-echo":
        assert peer.llm_note, "say why a model-backed agent runs without the scripted LLM"


def test_checker_fills_every_template_the_table_may_use(tmp_path: Path) -> None:
    pairs = [(f"K_{name}", "{" + name + "}") for name in sorted(CHECKER_TEMPLATES)]
    config = RunConfig(argv=["agent"], agent_env=pairs)
    env = agent_environment(config, home=tmp_path / "h", tmp=tmp_path / "t", llm_url="http://x:1")
    for key, _ in pairs:
        assert "{" not in env[key], key
    assert env["K_llm_url_v1"] == "http://x:1/v1"


def test_opencode_inline_config_is_json_after_filling(tmp_path: Path) -> None:
    peer = PEERS_BY_NAME["opencode"]
    config = RunConfig(argv=["agent"], agent_env=list(peer.env))
    env = agent_environment(config, home=tmp_path, tmp=tmp_path, llm_url="http://127.0.0.1:5000")
    content = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    assert content["provider"]["fake"]["options"]["baseURL"] == "http://127.0.0.1:5000/v1"
    assert content["model"] == "fake/fake-model"


def test_codex_authenticates_with_the_api_key_method_and_uses_the_responses_server(
    tmp_path: Path,
) -> None:
    peer = PEERS_BY_NAME["codex-acp"]
    assert peer.auth_method == "openai-api-key"
    assert ("OPENAI_API_KEY", "dummy") in peer.env
    assert peer.llm == "openai-responses"
    config = RunConfig(argv=list(peer.command), llm=peer.llm)
    argv = agent_command(config, home=tmp_path, tmp=tmp_path, llm_url="http://127.0.0.1:4242")
    provider = argv[argv.index("model_provider=fake") + 2]
    assert 'base_url="http://127.0.0.1:4242/v1"' in provider
    assert 'wire_api="responses"' in provider
    assert not any(UNREACHABLE_URL in part for part in peer.command)


def test_gemini_cli_is_pointed_at_the_gemini_server(tmp_path: Path) -> None:
    peer = PEERS_BY_NAME["gemini-cli"]
    assert peer.llm == "gemini" and not peer.llm_note
    config = RunConfig(argv=list(peer.command), agent_env=list(peer.env), llm=peer.llm)
    env = agent_environment(config, home=tmp_path, tmp=tmp_path, llm_url="http://127.0.0.1:4242")
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:4242"
    assert env["GEMINI_API_KEY"] == "dummy"


def test_resolve_fills_the_cache_layout(tmp_path: Path) -> None:
    peer = PEERS_BY_NAME["qwen-code"]
    resolved = resolve(peer, tmp_path)
    assert resolved.command[0] == str(tmp_path / "qwen-code" / "node_modules" / ".bin" / "qwen")
    assert not resolved.installed
    env = dict(resolved.env)
    assert env["OPENAI_BASE_URL"] == "{llm_url_v1}"  # left for the checker
    assert env["PATH"].split(":")[0] == str(node22_bin(tmp_path))


def test_resolve_reports_installed_once_marker_and_node_exist(tmp_path: Path) -> None:
    peer = PEERS_BY_NAME["qwen-code"]
    marker = Path(resolve(peer, tmp_path).command[0])
    marker.parent.mkdir(parents=True)
    marker.touch()
    assert not resolve(peer, tmp_path).installed  # Node 22 is still missing
    node22_bin(tmp_path).mkdir(parents=True)
    (node22_bin(tmp_path) / "node").touch()
    assert resolve(peer, tmp_path).installed


@pytest.mark.parametrize("peer", REMOTE_PEERS, ids=lambda p: p.name)
def test_remote_peers_are_servers_on_the_checkers_port(peer) -> None:
    assert peer.transport in ("http", "ws")
    assert peer.command[-2:] == ("--port", "{port}")
    if isinstance(peer.install, NpmInstall):
        # The script is copied next to its node_modules, which is where its imports resolve.
        shipped = Path(acp_conformance.peers.__file__).parent / "files"
        assert all((shipped / name).is_file() for name in peer.install.files)
        assert peer.installed_marker == "{peer_dir}/" + peer.install.files[0]
