"""``iac-code-dev bench``: measure the SPEC §11 performance targets against the real server.

Every metric starts ``iac-code acp`` as a subprocess with a private ``IAC_CODE_HOME`` and
talks to it over real pipes (see `_client`). The result is a measurement, not a test: a
missed target is printed as ``MISSED`` and the exit code stays 0; only a harness failure
(the agent does not start, answers garbage, or a bounded wait runs out) exits 1.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import (
    classifier,
    concurrency,
    conformance,
    first_turn,
    hardening,
    llm,
    proxy,
    remote,
    sessions,
    startup,
    store_append,
    store_postgres,
)
from ._client import HarnessError
from .context import BenchContext, default_agent_argv
from .procinfo import machine_description
from .results import Row
from .table import render


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    target: str
    run: Callable[[BenchContext], list[Row]]
    #: False: runs only when named with --only (it takes minutes).
    by_default: bool = True


METRICS: tuple[Metric, ...] = (
    Metric("startup", "≤ 100 ms median, ≤ 45 MiB", startup.run),
    Metric("session_new", "≤ 10 ms median", sessions.run_session_new),
    Metric("first_chunk", "≤ 20 ms beyond LLM", llm.run_first_chunk),
    Metric("cold_new", "≤ 30 ms median", first_turn.run_cold_new),
    Metric("prompt_idle", "≤ 30 ms after the model's first byte", first_turn.run_prompt_idle),
    Metric("cold_prompt", "≤ 0.5x the compared agent", first_turn.run_cold_prompt),
    Metric("preload_load", "≤ 2x warm", first_turn.run_preload_load),
    Metric("relay", "≥ 20,000 chunks/s", llm.run_relay),
    Metric("load", "≤ 1 s incl. replay", sessions.run_load),
    Metric("list", "≤ 100 ms first page", sessions.run_list),
    Metric("store_append", "-", store_append.run),
    Metric("first_chunk_store", "≤ 5 ms added by PostgreSQL", store_postgres.run_first_chunk_store),
    Metric("list_postgres", "≤ 100 ms first page", store_postgres.run_list_postgres),
    Metric("takeover", "≤ lease expiry + 1 s", store_postgres.run_takeover),
    Metric("concurrent", "0 errors, ≤ 1 MiB/idle session", concurrency.run),
    Metric("tool_call", "-", llm.run_tool_call),
    Metric("infra_classifier", "≤ 1 ms median", classifier.run),
    Metric("remote_initialize", "-", remote.run_initialize),
    Metric("remote_relay", "SSE and WebSocket vs stdio", remote.run_relay_remote),
    Metric("remote_concurrent", "0 errors", remote.run_concurrent_remote),
    Metric("conformance", "≤ 20 s (-j 2); SPEC ≤ 30 s", conformance.run),
    Metric("proxy", proxy.TARGET, proxy.run),
    Metric("kill9", "0 inconsistent sessions", hardening.run_kill9, by_default=False),
    Metric("kill9_fast_new", "0 lost", hardening.run_kill9_fast_new, by_default=False),
    Metric("burst", "0 errors", hardening.run_burst, by_default=False),
)


def select(patterns: Sequence[str]) -> list[Metric]:
    """Metrics whose name contains any of ``patterns`` (all when there are none)."""
    if not patterns:
        return [m for m in METRICS if m.by_default]
    return [m for m in METRICS if any(p in m.name for p in patterns)]


def run_metrics(ctx: BenchContext, metrics: Sequence[Metric]) -> tuple[list[Row], bool]:
    """Run each metric; a harness error becomes an ERROR row and the run goes on."""
    rows: list[Row] = []
    failed = False
    for metric in metrics:
        print(f"bench: {metric.name} ...", file=sys.stderr, flush=True)
        started = time.monotonic()
        try:
            produced = metric.run(ctx)
        except HarnessError as exc:
            failed = True
            message = str(exc)
            print(f"bench: {metric.name} failed: {message}", file=sys.stderr, flush=True)
            first_line = message.splitlines()[0] if message else "harness error"
            produced = [Row(metric.name, "-", metric.target, "ERROR", first_line[:200])]
        elapsed = time.monotonic() - started
        print(f"bench: {metric.name} took {elapsed:.1f} s", file=sys.stderr, flush=True)
        for row in produced:
            row.data.setdefault("metric_seconds", round(elapsed, 2))
        rows.extend(produced)
    return rows, failed


def write_json(path: Path, machine: dict[str, Any], ctx: BenchContext, rows: list[Row]) -> None:
    document = {
        "machine": machine,
        "agent": ctx.agent_argv,
        "compare": ctx.compare_argv,
        "repeat": ctx.repeat,
        "rows": [row.as_dict() for row in rows],
    }
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(args: argparse.Namespace) -> int:
    """Entry point of ``iac-code-dev bench`` (the namespace comes from ``iac_code_dev.cli``)."""
    patterns: list[str] = list(getattr(args, "only", None) or [])
    metrics = select(patterns)
    if not metrics:
        names = ", ".join(m.name for m in METRICS)
        print(f"bench: no metric matches {patterns}; known: {names}", file=sys.stderr)
        return 1
    agent = getattr(args, "agent", None)
    compare = getattr(args, "compare", None)
    compare_argv = shlex.split(compare) if compare else None
    if compare_argv and not any(m.name in ("startup", "cold_prompt") for m in metrics):
        print(
            "bench: --compare measures startup and cold_prompt; add one to --only",
            file=sys.stderr,
        )
    machine = machine_description()
    with tempfile.TemporaryDirectory(prefix="iac-code-bench-") as tmp:
        ctx = BenchContext(
            agent_argv=shlex.split(agent) if agent else default_agent_argv(),
            root=Path(tmp),
            repeat=max(1, int(getattr(args, "repeat", 10) or 10)),
            compare_argv=compare_argv,
            kill_trials=max(1, int(getattr(args, "kill_trials", None) or hardening.KILL_TRIALS)),
            seed=int(getattr(args, "seed", None) or 8),
        )
        rows, failed = run_metrics(ctx, metrics)
        print("bench: removing the temporary state ...", file=sys.stderr, flush=True)
    print(render(machine, rows))
    json_path = getattr(args, "json_path", None)
    if json_path is not None:
        write_json(Path(json_path), machine, ctx, rows)
    return 1 if failed else 0


__all__ = ["METRICS", "Metric", "main", "run_metrics", "select"]
