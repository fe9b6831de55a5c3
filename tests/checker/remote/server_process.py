"""Start an ACP server process and learn its endpoint, for the ``--url`` self-tests that
check a server the checker did not start.

A server is started with port 0 and announces the port it got in one line (``listening
PORT`` on stdout for the TypeScript SDK fixture, ``... http://127.0.0.1:PORT/acp`` on stderr
for ``iac-code acp --transport http``). Both pipes are drained by daemon threads for the
server's whole life, so a chatty server never stalls on a full pipe.
"""

from __future__ import annotations

import re
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Literal

#: Bound on a server announcing its port, and on each step of stopping it.
START_BOUND = 60.0

_PORT = re.compile(r"(?:listening |127\.0\.0\.1:)(\d+)")

Announce = Literal["stdout", "stderr"]


class ServerStartError(Exception):
    """The server exited or stayed silent instead of announcing its port."""


@contextmanager
def serving(
    argv: Sequence[str],
    *,
    announce_on: Announce = "stdout",
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """Start ``argv``, wait (bounded) for its port, yield ``http://127.0.0.1:PORT/acp``;
    afterwards close its stdin, SIGTERM it, and SIGKILL it if it lingers."""
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        text=True,
    )
    try:
        port = _announced_port(process, announce_on)
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        stop(process)


def stop(process: subprocess.Popen[str]) -> None:
    if process.stdin is not None:
        process.stdin.close()
    process.terminate()
    try:
        process.wait(timeout=START_BOUND)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=START_BOUND)


def _announced_port(process: subprocess.Popen[str], announce_on: Announce) -> int:
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
        announced.set()  # the stream closed: the server is gone

    for name in ("stdout", "stderr"):
        stream = getattr(process, name)
        threading.Thread(target=drain, args=(stream, name == announce_on), daemon=True).start()
    announced.wait(START_BOUND)
    if not found:
        process.kill()
        raise ServerStartError(f"the server did not announce its port: {''.join(seen)[-2000:]}")
    return found[0]
