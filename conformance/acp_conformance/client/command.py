"""``acp-conformance client [options] -- CLIENT_CMD ... {agent} ...``: the checker plays the agent.

Each scenario is one run of the client command, with ``{agent}`` replaced by the command
that starts the agent double as one string (an argument that is exactly ``{agent-words}``
becomes that command's separate words instead, for clients that take ``PROGRAM ARGS...``),
and ``{scenario}`` by the scenario's name, so a client can be given scenario-specific
arguments such as "cancel". The verdicts use the same requirement,
outcome and report types as ``acp-conformance run``, so the terminal table, the JSON report
and the exit codes (0 conformant, 1 not conformant, 3 inconclusive) read the same.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import UsageError, absolutize
from ..report.terminal_safe import printable
from .launch import AGENT_PLACEHOLDER, AGENT_WORDS_PLACEHOLDER
from .scenarios import SCENARIOS

if TYPE_CHECKING:
    from ..requirements import Requirement
    from ..run_result import RunResult
    from .launch import ScenarioRun

#: The placeholder the client command must contain (kept here so ``register`` stays light).


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "client",
        help="check an ACP client: CLIENT_CMD (after --) is run with {agent} replaced by a "
        "scripted agent double",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="scenarios: " + "; ".join(f"{k}: {v}" for k, v in SCENARIOS.items()),
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="bound on each wait of the agent double, in seconds (default 10)",
    )
    parser.add_argument(
        "--scenario-timeout",
        type=float,
        default=60.0,
        help="bound on one whole run of the client command, in seconds (default 60)",
    )
    parser.add_argument(
        "--input",
        metavar="TEXT",
        help="write TEXT (and a newline) to the client's standard input, then close it: for "
        "clients that read the prompt from a console (default: no input)",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        choices=tuple(SCENARIOS),
        default=[],
        help="run only these scenarios (repeatable; default all)",
    )
    parser.add_argument("--workdir", type=Path, help="keep each run's folder here")
    parser.add_argument("--report-json", type=Path, metavar="PATH")
    parser.add_argument("--verbose", "-v", action="store_true", help="list n/a rows too")
    parser.add_argument("client", nargs=argparse.REMAINDER, help="-- CLIENT_CMD ... {agent}")


def check_client(
    argv: list[str],
    scenarios: list[str],
    *,
    timeout: float,
    scenario_timeout: float,
    workdir: Path,
    stdin_text: str | None = None,
) -> RunResult:
    from .launch import run_scenario

    started = time.time()
    runs = [
        run_scenario(argv, name, workdir / name, timeout, scenario_timeout, stdin_text)
        for name in scenarios
    ]
    return build_result(argv, runs, started, timeout)


def build_result(
    argv: list[str], runs: list[ScenarioRun], started: float, timeout: float
) -> RunResult:
    # Imported here so that registering the subcommand does not load the runner.
    from ..catalogue import judged_by
    from ..config import RunConfig
    from ..outcomes import Outcome, Verdict, combine, not_applicable
    from ..run_result import RequirementResult, RunResult
    from .judge import judge

    found: dict[str, list[Outcome]] = {}
    for run in runs:
        for req_id, outcomes in judge(run).items():
            found.setdefault(req_id, []).extend(outcomes)
    results = {}
    for req in judged_by("client"):
        outcomes = found.get(req.id) or [not_applicable("no scenario exercised it")]
        verdict = combine(outcomes)
        failures = [o for o in outcomes if o.verdict is Verdict.FAIL]
        softened = req.blocking and bool(failures) and all(o.soft for o in failures)
        results[req.id] = RequirementResult(req, verdict, outcomes, softened=softened)
        if softened:
            results[req.id].requirement = _as_should(req)
    info = _client_info(runs)
    notes = [f"scenario {r.scenario}: {r.describe_exit()}" for r in runs]
    return RunResult(
        config=RunConfig(argv=argv, timeout=timeout),
        results=results,
        runs=[],
        started=started,
        duration=time.time() - started,
        agent_info=info,
        notes=notes,
    )


def _as_should(req: Requirement) -> Requirement:
    """A blocking requirement whose every failure was soft, reported as SHOULD."""
    from ..requirements import Tier

    return replace(req, tier=Tier.SHOULD)


def _client_info(runs: list[ScenarioRun]) -> dict[str, object] | None:
    for run in runs:
        for frame in run.frames:
            msg = frame.message
            if (
                frame.direction == "c2a"
                and isinstance(msg, dict)
                and msg.get("method") == "initialize"
            ):
                info = (msg.get("params") or {}).get("clientInfo")
                return info if isinstance(info, dict) else None
    return None


def run(args: argparse.Namespace) -> int:
    from ..report import json_report, terminal

    argv = list(args.client)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError(
            "missing client command: acp-conformance client [options] -- CLIENT_CMD {agent}"
        )
    if not any(AGENT_PLACEHOLDER in a or a == AGENT_WORDS_PLACEHOLDER for a in argv):
        raise UsageError(
            "the client command must contain {agent} (the agent command as one string) or "
            "{agent-words} (as separate arguments) where the agent command goes"
        )
    argv = absolutize(argv)  # each scenario runs the client in its own folder
    scenarios = args.scenario or list(SCENARIOS)
    with tempfile.TemporaryDirectory(prefix="acp-conformance-client-") as tmp:
        workdir = args.workdir or Path(tmp)
        result = check_client(
            argv,
            scenarios,
            timeout=args.timeout,
            scenario_timeout=args.scenario_timeout,
            workdir=workdir,
            stdin_text=None if args.input is None else args.input + "\n",
        )
    print(printable(terminal.render(result, verbose=args.verbose)))
    if args.report_json:
        json_report.write(result, args.report_json)
        print(f"acp-conformance: wrote {args.report_json}", file=sys.stderr)
    return result.exit_code
