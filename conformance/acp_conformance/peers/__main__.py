"""``python -m acp_conformance.peers {list,install,probe,run,matrix}``: the peers matrix tool."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from ..requirements import RULE_PROFILES
from .agents import OWN_AGENT, PEERS, PEERS_BY_NAME, REMOTE_PEERS, Peer
from .checking import DEFAULT_RUN_TIMEOUT, CheckOptions, check_peer, load_previous, rejudge
from .html_page import load_client_rows, write_page
from .install import DEFAULT_STEP_TIMEOUT, Installer
from .layout import DEFAULT_CACHE, resolve
from .matrix import AgentRun, write_matrix
from .probe import probe
from .schedule import PastCheck, run_side_by_side
from .typical_costs import TYPICAL_COSTS


def _selected(only: Sequence[str], *, with_own: bool) -> list[Peer]:
    known = {OWN_AGENT.name: OWN_AGENT, **PEERS_BY_NAME}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise SystemExit(f"unknown peer(s): {', '.join(unknown)}; known: {', '.join(known)}")
    if only:
        return [known[name] for name in only]
    return [OWN_AGENT, *PEERS, *REMOTE_PEERS] if with_own else [*PEERS, *REMOTE_PEERS]


def _cmd_list(args: argparse.Namespace) -> int:
    for peer in _selected(args.only, with_own=True):
        resolved = resolve(peer, args.cache)
        state = "installed" if resolved.installed else "missing"
        print(f"{peer.name:18} {state:9} llm={peer.llm:9} {' '.join(resolved.command)}")
    return 0


def _cmd_install(args: argparse.Namespace) -> int:
    installer = Installer(args.cache, step_timeout=args.step_timeout)
    outcomes = installer.install_all(_selected(args.only, with_own=False))
    for outcome in outcomes:
        print(f"{outcome.name:18} {outcome.status:9} {outcome.detail}")
    return 1 if any(o.status == "failed" for o in outcomes) else 0


def _cmd_probe(args: argparse.Namespace) -> int:
    failures = 0
    for peer in _selected(args.only, with_own=True):
        resolved = resolve(peer, args.cache)
        if peer.transport != "stdio":
            print(f"{peer.name:18} n/a  (a server: `run` checks it over --url)")
            continue
        if not resolved.installed:
            print(f"{peer.name:18} missing")
            failures += 1
            continue
        result = probe(resolved, timeout=args.timeout)
        seconds = f"{result.seconds:.2f} s" if result.seconds is not None else "-"
        print(f"{peer.name:18} {'ok' if result.ok else 'FAIL':4} {seconds:>8}  {result.detail}")
        if args.verbose and result.response is not None:
            print("    " + json.dumps(result.response.get("result"))[:400])
        if not result.ok:
            failures += 1
            print("    stderr: " + result.stderr_tail.strip().replace("\n", "\n    "))
    return 1 if failures else 0


def _profiles(args: argparse.Namespace) -> list[str]:
    """The rule profiles to run, each into its own subfolder of ``--out``."""
    return list(dict.fromkeys(args.profile or RULE_PROFILES))


def _cmd_run(args: argparse.Namespace) -> int:
    # The agents run once, under the first profile; a profile only re-tiers house rules, so
    # the other profiles' matrices re-judge the same reports (peers/retier.py).
    first, *others = _profiles(args)
    options = CheckOptions(
        out_dir=(args.out / first).resolve(),
        jobs=args.jobs,
        wait_timeout=args.timeout,
        run_timeout=args.run_timeout,
        profile=first,
    )
    resolved = [resolve(peer, args.cache) for peer in _selected(args.only, with_own=True)]
    # Most agents mostly wait (on their start-up, on the checker's bounded waits), so a few
    # run side by side, paired by the CPU they used last time; the few that keep every CPU
    # busy run alone (peers/schedule.py). Each has its own report and log file, and the
    # table keeps its order.
    runs = run_side_by_side(
        resolved,
        lambda one: check_peer(one, options),
        lanes=args.peers_at_once,
        last_check=lambda one: _last_check(one.peer, options.out_dir),
    )
    clients = _client_rows(args)
    _write(runs, options.out_dir, first, clients)
    for profile in others:
        rejudged = [rejudge(run, profile, (args.out / profile).resolve()) for run in runs]
        _write(rejudged, (args.out / profile).resolve(), profile, clients)
    return 0


def _last_check(peer: Peer, out_dir: Path) -> PastCheck | None:
    """What the peer's check cost in an earlier run into ``out_dir``; without a report, what
    it typically costs (None: not known either)."""
    report = load_previous(peer, out_dir).report
    if report is None:
        return TYPICAL_COSTS.get(peer.name)
    seconds = report.get("durationSeconds")
    if not isinstance(seconds, int | float):
        return None
    cpu = report.get("cpuSeconds")
    parts = [cpu.get("agents"), cpu.get("checker")] if isinstance(cpu, dict) else []
    numbers = [float(part) for part in parts if isinstance(part, int | float)]
    cpu_seconds = sum(numbers) if parts and len(numbers) == len(parts) else None
    return PastCheck(float(seconds), cpu_seconds)


def _client_rows(args: argparse.Namespace) -> list[dict[str, object]]:
    """The ``--clients`` files' rows, for the page's second table."""
    rows: list[dict[str, object]] = []
    for path in args.clients:
        try:
            rows += load_client_rows(path)
        except (OSError, ValueError, AttributeError) as error:
            raise SystemExit(f"--clients {path}: not a client results file ({error})") from None
    return rows


def _write(
    runs: list[AgentRun], out_dir: Path, profile: str, clients: list[dict[str, object]]
) -> None:
    markdown_path, json_path = write_matrix(runs, out_dir, profile=profile)
    html_path = write_page(runs, out_dir, clients, profile=profile)
    print(markdown_path.read_text(encoding="utf-8"))
    print(f"wrote {markdown_path}, {json_path} and {html_path}", file=sys.stderr)


def _cmd_matrix(args: argparse.Namespace) -> int:
    clients = _client_rows(args)
    for profile in _profiles(args):
        out_dir = (args.out / profile).resolve()
        runs = [load_previous(peer, out_dir) for peer in _selected(args.only, with_own=True)]
        _write(runs, out_dir, profile, clients)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m acp_conformance.peers",
        description="Install third-party ACP agents and run the conformance checker against them.",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"install folder of the peers (default {DEFAULT_CACHE})",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_only(command: argparse.ArgumentParser) -> argparse.ArgumentParser:
        command.add_argument(
            "--only",
            action="append",
            default=[],
            metavar="NAME",
            help="restrict to this peer (repeatable)",
        )
        return command

    def with_clients(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--clients",
            action="append",
            type=Path,
            default=[],
            metavar="FILE",
            help="client results JSON (rows {client, requirement, verdict, reason}, or a "
            "client report) for the HTML page's clients table (repeatable)",
        )

    with_only(sub.add_parser("list", help="the peers, whether installed, and their commands"))
    install = with_only(sub.add_parser("install", help="install missing peers into the cache"))
    install.add_argument(
        "--step-timeout",
        type=float,
        default=DEFAULT_STEP_TIMEOUT,
        help=f"bound on each install command, s (default {DEFAULT_STEP_TIMEOUT:g})",
    )
    probe_cmd = with_only(sub.add_parser("probe", help="spawn each peer and time its initialize"))
    probe_cmd.add_argument("--timeout", type=float, default=30.0)
    run = with_only(
        sub.add_parser("run", help="run the checker against each peer; write the matrix")
    )
    run.add_argument(
        "--out",
        type=Path,
        default=Path("peers-results"),
        help="folder for reports and the matrix (default ./peers-results)",
    )
    run.add_argument("--jobs", type=int, default=1, help="the checker's --jobs (default 1)")
    run.add_argument(
        "--peers-at-once",
        type=int,
        default=2,
        metavar="N",
        help="agents checked side by side (default 2; 1 runs them one after another)",
    )
    run.add_argument(
        "--profile",
        action="append",
        choices=tuple(RULE_PROFILES),
        help="rule profile to run (repeatable; default: every profile, each into OUT/PROFILE/)",
    )
    with_clients(run)
    run.add_argument("--timeout", type=float, default=30.0, help="the checker's per-wait --timeout")
    run.add_argument(
        "--run-timeout",
        type=float,
        default=DEFAULT_RUN_TIMEOUT,
        help="bound on one agent's whole checker run, s",
    )
    matrix = with_only(
        sub.add_parser("matrix", help="re-render the matrix from the reports of an earlier run")
    )
    matrix.add_argument("--out", type=Path, default=Path("peers-results"))
    matrix.add_argument("--profile", action="append", choices=tuple(RULE_PROFILES))
    with_clients(matrix)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(message)s",
        datefmt="%H:%M:%S",
        stream=sys.stderr,
    )
    handlers = {
        "list": _cmd_list,
        "install": _cmd_install,
        "probe": _cmd_probe,
        "run": _cmd_run,
        "matrix": _cmd_matrix,
    }
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
