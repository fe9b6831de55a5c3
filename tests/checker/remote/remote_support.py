"""Helpers for the remote (``--url``) self-tests: the TS SDK fixture agent's command line, and
the checker run in-process against an endpoint (servers are started with
:func:`server_process.serving`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import acp_conformance.peers
import anyio
import pytest
from acp_conformance.config import RunConfig
from acp_conformance.harness.remote_http import RemoteTarget
from acp_conformance.run_result import RunResult
from acp_conformance.runner import execute

HERE = Path(__file__).parent
TS_AGENT = Path(acp_conformance.peers.__file__).parent / "files" / "ts_sdk_agent.mjs"


def require_node_fixture() -> str:
    """The node executable, or skip (with the reason printed) when the fixture cannot run."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the TypeScript SDK server fixture cannot run")
    if not (HERE / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.skip(
            f"run `npm install` in {HERE} first (the fixture needs @agentclientprotocol/sdk)"
        )
    return node


def ts_agent_argv(node: str, tmp_path: Path, *args: str) -> list[str]:
    """The TS SDK fixture agent (shipped with the peers tooling), run from a folder that sees
    this directory's node_modules (ESM resolves packages from the script's own folder)."""
    script = tmp_path / TS_AGENT.name
    shutil.copyfile(TS_AGENT, script)
    (tmp_path / "node_modules").symlink_to(HERE / "node_modules")
    return [node, str(script), *args]


def run_remote(
    url: str,
    *,
    only: list[str] | None = None,
    websocket: bool = False,
    token: str | None = None,
    timeout: float = 60.0,
    profile: str = "acp",
) -> RunResult:
    config = RunConfig(
        argv=[],
        profile=profile,
        only=only or [],
        timeout=timeout,
        jobs=2,
        fuzz_examples=5,
        remote=RemoteTarget(url=url, websocket=websocket, token=token),
    )
    return anyio.run(execute, config)
