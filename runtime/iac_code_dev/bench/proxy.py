"""What ``acp-conformance proxy`` costs a session it watches (issue 17: relay ≥ 0.8x a
direct pipe, ≤ 1 ms added per message at the median).

The checker's own bench (``python -m acp_conformance.proxy.bench --json``) drives the same
small agent over a direct pipe and through the proxy in one run; this row reports its
numbers. It runs as a command so the development tools need not import the checker.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

from ._client import HarnessError
from .context import BenchContext
from .results import Row

TARGET = "≥ 0.8x direct, ≤ 1 ms/message"
RUN_BOUND_SECONDS = 600.0


def run(ctx: BenchContext) -> list[Row]:
    if importlib.util.find_spec("acp_conformance") is None:
        return [Row("proxy", "-", TARGET, "n/a", "acp-conformance not installed")]
    argv = [sys.executable, "-m", "acp_conformance.proxy.bench", "--json"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=RUN_BOUND_SECONDS)
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(
            f"the proxy bench did not finish within {RUN_BOUND_SECONDS:g} s"
        ) from exc
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace")[-400:]
        raise HarnessError(f"the proxy bench failed (exit {done.returncode}): {tail}")
    data = json.loads(done.stdout)
    return [
        Row(
            "proxy",
            f"{data['relayRatio']}x, +{data['addedMsPerMessage']} ms",
            TARGET,
            "ok" if data["met"] else "MISSED",
            f"{data['proxyChunksPerSecond']} vs {data['directChunksPerSecond']} chunks/s",
            data=data,
        )
    ]
