"""The conformance checker's whole run against the agent (SPEC §11: ≤ 30 s wall clock; the
checker's own target with ``--jobs 2`` is ≤ 20 s).

The checker runs as a separate command (``python -m acp_conformance.cli``), exactly as a user
runs it, with the quick start's options. The row reports the wall clock of that command and
its verdict; the checker's JSON report says which processes the time went to.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ._client import HarnessError
from .context import BenchContext, clean_environment
from .results import Row

TARGET_SECONDS = 20.0
JOBS = 2
#: A run that takes longer than this is a harness problem, not a measurement.
RUN_BOUND_SECONDS = 600.0


def checker_argv(
    agent_argv: Sequence[str], report: Path, *, extra: Sequence[str] = ()
) -> list[str]:
    """The quick start's checker command against ``agent_argv``, writing ``report``."""
    return [
        sys.executable,
        "-m",
        "acp_conformance.cli",
        "run",
        "--profile",
        "iac-code",
        "--llm",
        "anthropic",
        "--jobs",
        str(JOBS),
        *extra,
        "--report-json",
        str(report),
        "--",
        *agent_argv,
    ]


def run(ctx: BenchContext) -> list[Row]:
    if importlib.util.find_spec("acp_conformance") is None:
        return [Row("conformance", "-", "≤ 20 s (-j 2)", "n/a", "acp-conformance not installed")]
    work = ctx.workspace("conformance")
    report = work.root / "report.json"
    argv = checker_argv(ctx.agent_argv, report)
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd=work.project,
            # The checker gives every scenario its own HOME and scripted model; only what
            # the shell set for the agent is left out.
            env=clean_environment(),
            timeout=RUN_BOUND_SECONDS,
        )
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(f"the checker did not finish within {RUN_BOUND_SECONDS:g} s") from exc
    seconds = time.monotonic() - started
    if not report.exists():
        tail = done.stderr.decode(errors="replace")[-400:]
        raise HarnessError(f"the checker wrote no report (exit {done.returncode}): {tail}")
    document = json.loads(report.read_text(encoding="utf-8"))
    processes = document.get("processes") or []
    verdict_line = str(document.get("verdictLine", "?"))
    met = seconds <= TARGET_SECONDS and done.returncode == 0
    return [
        Row(
            "conformance",
            f"{seconds:.1f} s",
            f"≤ {TARGET_SECONDS:g} s (-j {JOBS})",
            "ok" if met else "MISSED",
            f"{verdict_line}; {len(processes)} agent processes",
            data={
                "seconds": round(seconds, 3),
                "exitCode": done.returncode,
                "verdict": verdict_line,
                "summary": document.get("summary"),
                "processes": len(processes),
                "jobs": JOBS,
            },
        )
    ]
