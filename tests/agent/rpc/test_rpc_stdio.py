"""The stdio transport in a real subprocess: stdout carries protocol frames only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

pytestmark = pytest.mark.subprocess

SERVER = Path(__file__).with_name("rpc_stdio_server.py")
V = {"jsonrpc": "2.0"}


def frame(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def parse_frames(stdout: bytes) -> list[dict[str, Any]]:
    assert stdout.endswith(b"\n")
    frames = [json.loads(line) for line in stdout.split(b"\n")[:-1]]
    assert all(isinstance(f, dict) and f.get("jsonrpc") == "2.0" for f in frames)
    return frames


def run_server(stdin: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    """The server's whole run on ``stdin``: every request in it is answered before the server
    exits at end of input (a generous grace, which ends as soon as nothing is in flight)."""
    return subprocess.run(
        [sys.executable, str(SERVER), *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "RPC_STDIO_SERVER_GRACE": "60"},
    )


def test_stray_prints_and_child_output_never_reach_stdout() -> None:
    requests = (
        frame({**V, "id": 1, "method": "echo", "params": {"a": 1}})
        + frame({**V, "method": "note"})
        + frame({**V, "id": 2, "method": "spawn"})
        + frame({**V, "id": 3, "method": "stream", "params": {"count": 200}})
        + b"not json\n"
        + frame({**V, "id": 4, "method": "echo"})
    )
    completed = run_server(requests)
    assert completed.returncode == 0, completed.stderr.decode()
    frames = parse_frames(completed.stdout)
    answers = {f["id"]: f for f in frames if "id" in f and f["id"] is not None}
    assert answers[1]["result"] == {"echo": {"a": 1}}
    assert answers[2]["result"] == {"spawned": True}
    assert answers[3]["result"] == {"streamed": 200}
    assert answers[4]["result"] == {"echo": None}
    assert next(f for f in frames if f.get("id", 0) is None)["error"]["code"] == -32700
    updates = [f["params"]["index"] for f in frames if f.get("method") == "update"]
    assert updates == list(range(200))
    stderr = completed.stderr.decode()
    assert "stray print from a handler" in stderr
    assert "stray print from a notification" in stderr
    assert "child says hi" in stderr
    assert "on_shutdown called" in stderr


def test_prefix_bytes_are_processed_before_stdin() -> None:
    prefix = json.dumps({**V, "id": "pre", "method": "echo", "params": {"p": 1}}) + "\n"
    completed = run_server(frame({**V, "id": "after", "method": "echo"}), prefix)
    assert completed.returncode == 0
    assert [f["id"] for f in parse_frames(completed.stdout)] == ["pre", "after"]


async def _read_frame(process: Process, buffer: bytearray) -> dict[str, Any]:
    assert process.stdout is not None
    while b"\n" not in buffer:
        buffer += await process.stdout.receive()
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    decoded: dict[str, Any] = json.loads(line)
    return decoded


@pytest.mark.anyio
async def test_sigterm_mid_request_shuts_down_cleanly_with_status_zero() -> None:
    process = await anyio.open_process([sys.executable, str(SERVER)])
    try:
        with anyio.fail_after(60):
            assert process.stdin is not None and process.stderr is not None
            buffer = bytearray()
            await process.stdin.send(frame({**V, "id": 1, "method": "echo"}))
            assert (await _read_frame(process, buffer))["id"] == 1
            await process.stdin.send(frame({**V, "id": 2, "method": "hang"}))
            # Round trip another request so that "hang" is certainly in flight.
            await process.stdin.send(frame({**V, "id": 3, "method": "echo"}))
            assert (await _read_frame(process, buffer))["id"] == 3
            process.send_signal(signal.SIGTERM)
            cancelled = await _read_frame(process, buffer)
            assert cancelled["id"] == 2 and cancelled["error"]["code"] == -32800
            assert await process.wait() == 0
            stderr = b""
            async for chunk in process.stderr:
                stderr += chunk
            assert b"on_shutdown called" in stderr
    finally:
        if process.returncode is None:
            process.kill()
        await process.aclose()
