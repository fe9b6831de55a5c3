"""Running ``acp-conformance run`` against one peer and collecting its report JSON.

The checker runs as a child process (``python -m acp_conformance.cli``), exactly as a user
would run it, so the matrix reflects the real command line. Its terminal output is kept in
``OUT/NAME.log``; its exit code says conformant or not and is not an error here.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .agents import Peer
from .layout import ResolvedPeer
from .matrix import AgentRun
from .retier import under_profile

log = logging.getLogger("acp_conformance.peers")

#: Bound on one whole checker run (all scenarios of one agent).
DEFAULT_RUN_TIMEOUT = 1800.0


@dataclass(frozen=True)
class CheckOptions:
    out_dir: Path
    jobs: int = 1
    #: The checker's per-wait ``--timeout``; slow-starting Node agents need more than 10 s.
    wait_timeout: float = 30.0
    run_timeout: float = DEFAULT_RUN_TIMEOUT
    #: The checker's rule profile (``--profile acp|iac-code``).
    profile: str = "acp"


def checker_argv(resolved: ResolvedPeer, report_path: Path, options: CheckOptions) -> list[str]:
    """The ``acp-conformance run`` command line for one peer. A remote peer's command is a
    server the checker starts per agent on a free port (``--url ...{port}... -- CMD``)."""
    peer = resolved.peer
    argv = [
        sys.executable,
        "-m",
        "acp_conformance.cli",
        "run",
        "--llm",
        peer.llm,
        "--profile",
        options.profile,
        "--tools",
        peer.tools,
        "--jobs",
        str(options.jobs),
        "--timeout",
        f"{options.wait_timeout:g}",
        "--report-json",
        str(report_path),
    ]
    if peer.auth_method:
        argv += ["--auth-method", peer.auth_method]
    if peer.transport != "stdio":
        argv += [
            "--url",
            "http://127.0.0.1:{port}/acp",
            *(["--ws"] if peer.transport == "ws" else []),
        ]
    for key, value in resolved.env:
        argv += ["--agent-env", f"{key}={value}"]
    return [*argv, "--", *resolved.command]


def check_peer(resolved: ResolvedPeer, options: CheckOptions) -> AgentRun:
    """Run the checker against one installed peer; never raises for agent or checker faults."""
    peer = resolved.peer
    if not resolved.installed:
        return AgentRun(
            peer, None, error="not installed (run: python -m acp_conformance.peers install)"
        )
    options.out_dir.mkdir(parents=True, exist_ok=True)
    report_path = options.out_dir / f"{peer.name}.report.json"
    log_path = options.out_dir / f"{peer.name}.log"
    report_path.unlink(missing_ok=True)
    argv = checker_argv(resolved, report_path, options)
    with log_path.open("w", encoding="utf-8") as out:
        try:
            completed = _run_checker(peer, argv, out, options)
        except subprocess.TimeoutExpired:
            return AgentRun(peer, None, error=f"checker timed out after {options.run_timeout:g} s")
    if not report_path.exists():
        return AgentRun(
            peer,
            None,
            error=f"checker exited {completed.returncode} without a report (see {log_path})",
        )
    run = _read_report(peer, report_path)
    if run.report is not None:
        log.info("[%s] %s", peer.name, run.report.get("verdictLine", completed.returncode))
    return run


def _run_checker(
    peer: Peer, argv: list[str], out: IO[str], options: CheckOptions
) -> subprocess.CompletedProcess[bytes]:
    log.info("[%s] $ %s", peer.name, " ".join(argv))
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        timeout=options.run_timeout,
        check=False,
    )


def _read_report(peer: Peer, report_path: Path) -> AgentRun:
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        return AgentRun(peer, None, error=f"unreadable report {report_path}: {error}")
    return AgentRun(peer, report, report_path=str(report_path))


def load_previous(peer: Peer, out_dir: Path) -> AgentRun:
    """The report an earlier ``run`` left in ``out_dir`` (to re-render without re-running)."""
    report_path = out_dir / f"{peer.name}.report.json"
    if not report_path.exists():
        return AgentRun(peer, None, error=f"no report in {out_dir}")
    return _read_report(peer, report_path)


def rejudge(run: AgentRun, profile: str, out_dir: Path) -> AgentRun:
    """``run`` judged under another rule profile; its report is written to ``out_dir``."""
    if run.report is None:
        return run
    report = under_profile(run.report, profile)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{run.peer.name}.report.json"
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return AgentRun(run.peer, report, report_path=str(path))
