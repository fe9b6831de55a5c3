"""Helpers for the remote (``--url``) self-tests: start a server process on 127.0.0.1, learn its
port from its first stdout line, run the checker in-process against it, stop it by pid."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from acp_conformance.config import RunConfig
from acp_conformance.harness.remote import RemoteTarget
from acp_conformance.runner import RunResult, execute

HERE = Path(__file__).parent
TS_AGENT = HERE / "ts_sdk_agent.mjs"
#: Bound on a server printing its port and on its shutdown.
START_BOUND = 20.0


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


@contextmanager
def serving(
    argv: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Start ``argv`` (which must print a line ending in its port), yield its /acp URL."""
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        text=True,
    )
    try:
        port = _read_port(process)
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=START_BOUND)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=START_BOUND)


def _read_port(process: subprocess.Popen[str]) -> int:
    """The port from the server's first stdout line, read in a thread so the wait is bounded."""
    assert process.stdout is not None
    stdout = process.stdout
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_BOUND)
    line = lines[0] if lines else ""
    words = line.split()
    if not words or not words[-1].isdigit():
        process.kill()
        stderr = process.stderr.read() if process.stderr else ""
        raise RuntimeError(f"the server did not announce its port: {line!r} {stderr[-2000:]}")
    return int(words[-1])


def run_remote(
    url: str,
    *,
    only: list[str] | None = None,
    websocket: bool = False,
    token: str | None = None,
    timeout: float = 5.0,
) -> RunResult:
    config = RunConfig(
        argv=[],
        only=only or [],
        timeout=timeout,
        jobs=2,
        fuzz_examples=5,
        remote=RemoteTarget(url=url, websocket=websocket, token=token),
    )
    return anyio.run(execute, config)
