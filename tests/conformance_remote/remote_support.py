"""Helpers for the remote (``--url``) self-tests: start a server process on 127.0.0.1, learn its
port from its first stdout line, run the checker in-process against it, stop it by pid."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

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
    argv: Sequence[str],
    *,
    announce_on: str = "stdout",
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Start ``argv``, wait (bounded) for the line on ``announce_on`` that names its port, yield
    its /acp URL; afterwards close its stdin, SIGTERM it, and SIGKILL it if it lingers."""
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
        port = _announced_port(process, announce_on)
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.terminate()
        try:
            process.wait(timeout=START_BOUND)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=START_BOUND)


_PORT = re.compile(r"(?:listening |127\.0\.0\.1:)(\d+)")


def _announced_port(process: subprocess.Popen[str], announce_on: str) -> int:
    """Both pipes are drained by daemon threads (a full pipe would stall the server); the first
    line naming a port on ``announce_on`` gives it."""
    found: list[int] = []
    seen: list[str] = []
    announced = threading.Event()

    def drain(stream: IO[str], announces: bool) -> None:
        for line in stream:
            if len(seen) < 200:
                seen.append(line)
            match = _PORT.search(line) if announces else None
            if match and not found:
                found.append(int(match.group(1)))
                announced.set()
        announced.set()

    for name in ("stdout", "stderr"):
        stream = getattr(process, name)
        threading.Thread(target=drain, args=(stream, name == announce_on), daemon=True).start()
    announced.wait(START_BOUND)
    if not found:
        process.kill()
        raise RuntimeError(f"the server did not announce its port: {''.join(seen)[-2000:]}")
    return found[0]


def run_remote(
    url: str,
    *,
    only: list[str] | None = None,
    websocket: bool = False,
    token: str | None = None,
    timeout: float = 10.0,
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
