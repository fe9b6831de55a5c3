"""A smoke test for an installed peer: spawn it, send ``initialize``, time the answer.

This is deliberately independent of the checker (plain subprocess and NDJSON), so that a
broken install can be told apart from a checker problem. Each probe gets its own HOME,
working folder and temporary folder, and the agent's whole process group is stopped after.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .agents import UNREACHABLE_URL
from .layout import ResolvedPeer

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
        },
        "clientInfo": {"name": "acp-peers-probe", "version": "0"},
    },
}


@dataclass
class ProbeResult:
    name: str
    ok: bool
    #: Seconds from spawn to the ``initialize`` response (``None`` when there was none).
    seconds: float | None
    detail: str
    response: dict[str, Any] | None = None
    stderr_tail: str = ""


def probe_environment(resolved: ResolvedPeer, home: Path, tmp: Path) -> dict[str, str]:
    """The inherited environment with a private HOME and the peer's pairs filled in."""
    env = dict(os.environ)
    env["HOME"] = str(home)
    env["TMPDIR"] = str(tmp)
    for key, value in resolved.env:
        env[key] = _fill_checker_templates(value, home, tmp)
    return env


def probe_command(resolved: ResolvedPeer, home: Path, tmp: Path) -> list[str]:
    """The peer's argv with the checker's templates filled as a run would (codex-acp names
    its model endpoint in an argument); the probe's model URL is unreachable."""
    return [_fill_checker_templates(part, home, tmp) for part in resolved.command]


def _fill_checker_templates(value: str, home: Path, tmp: Path) -> str:
    values = {
        "llm_url": UNREACHABLE_URL,
        "llm_url_v1": UNREACHABLE_URL + "/v1",
        "home": str(home),
        "tmp": str(tmp),
    }
    for name, replacement in values.items():
        value = value.replace("{" + name + "}", replacement)
    return value


def _pump_lines(stream: IO[bytes], into: queue.Queue[bytes | None]) -> None:
    for line in iter(stream.readline, b""):
        into.put(line)
    into.put(None)


def _stop_group(process: subprocess.Popen[bytes], grace: float) -> str:
    """Close stdin, then SIGTERM, then SIGKILL the agent's group; say which rung ended it."""
    try:
        if process.stdin is not None:
            process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(timeout=grace)
        return "stdin-eof"
    except subprocess.TimeoutExpired:
        pass
    for sig, rung in ((signal.SIGTERM, "sigterm"), (signal.SIGKILL, "sigkill")):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return rung
        try:
            process.wait(timeout=grace)
            return rung
        except subprocess.TimeoutExpired:
            continue
    return "stuck"


def probe(resolved: ResolvedPeer, *, timeout: float = 30.0) -> ProbeResult:
    """Spawn the peer and wait (at most ``timeout`` s) for its ``initialize`` response."""
    name = resolved.peer.name
    with tempfile.TemporaryDirectory(prefix=f"acp-probe-{name}-") as scratch:
        home, cwd, tmp = (Path(scratch) / part for part in ("home", "cwd", "tmp"))
        for folder in (home, cwd, tmp):
            folder.mkdir()
        stderr_path = Path(scratch) / "stderr.log"
        with stderr_path.open("wb") as stderr_file:
            started = time.monotonic()
            try:
                process = subprocess.Popen(
                    probe_command(resolved, home, tmp),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr_file,
                    cwd=cwd,
                    env=probe_environment(resolved, home, tmp),
                    start_new_session=True,
                )
            except OSError as error:
                return ProbeResult(name, False, None, f"could not start: {error}")
            lines: queue.Queue[bytes | None] = queue.Queue()
            assert process.stdout is not None and process.stdin is not None
            threading.Thread(target=_pump_lines, args=(process.stdout, lines), daemon=True).start()
            try:
                process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
                process.stdin.flush()
                result = _await_response(name, lines, started, timeout)
            finally:
                rung = _stop_group(process, grace=3.0)
        result.detail += f"; stopped by {rung}"
        result.stderr_tail = stderr_path.read_text(errors="replace")[-600:]
        return result


def _await_response(
    name: str, lines: queue.Queue[bytes | None], started: float, timeout: float
) -> ProbeResult:
    deadline = started + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return ProbeResult(name, False, None, f"no initialize response within {timeout:g} s")
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            continue
        if line is None:
            return ProbeResult(name, False, None, "stdout closed before the response")
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return ProbeResult(name, False, None, f"non-JSON line on stdout: {line[:120]!r}")
        if isinstance(message, dict) and message.get("id") == 1:
            elapsed = time.monotonic() - started
            if "result" in message:
                return ProbeResult(name, True, elapsed, "initialize answered", message)
            return ProbeResult(name, False, elapsed, f"initialize error: {message.get('error')}")
