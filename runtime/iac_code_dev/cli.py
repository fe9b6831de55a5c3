"""The ``iac-code-dev`` command: the benchmarks and the demo of the development environment."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="iac-code-dev",
        description="Development tools for the iac-code agent (not installed with the agent).",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    bench = commands.add_parser(
        "bench",
        help="measure the agent's performance targets and print a table",
        description="Run the benchmarks against this build (and optionally another agent).",
    )
    bench.add_argument("--json", type=Path, dest="json_path", help="also write results as JSON")
    bench.add_argument("--only", action="append", default=[], help="run only metrics matching this")
    bench.add_argument("--repeat", type=int, default=10, help="repetitions for start-up metrics")
    bench.add_argument(
        "--kill-trials",
        type=_positive_int,
        help="kill9 (opt-in, --only kill9): processes killed mid-turn (default 80)",
    )
    bench.add_argument("--seed", type=int, help="kill9: seed of the random kill moments")
    bench.add_argument(
        "--agent",
        metavar="CMD",
        help="the agent command to measure (quoted; default: this environment's iac-code acp)",
    )
    bench.add_argument(
        "--compare",
        metavar="CMD",
        help="another agent command to measure spawn→initialize side by side (quoted)",
    )
    demo = commands.add_parser(
        "demo",
        help="run a short offline session end to end (scripted model, real subprocess)",
        description="Start `iac-code acp` as a subprocess, drive it through a real ACP client"
        " against the built-in scripted model server, and print the conversation.",
    )
    demo.add_argument(
        "--iac",
        action="store_true",
        help="one IaC turn as a transcript: read a module, an edit approved with its diff,"
        " iac_check findings, a refused terraform apply",
    )
    coverage = commands.add_parser(
        "coverage",
        help="print the ACP protocol coverage table (Markdown)",
        description="Print which ACP methods, updates and capabilities the agent supports,"
        " derived from schema/index.json and the agent itself.",
    )
    coverage.add_argument("--write", type=Path, help="write the table to this file instead")
    version = commands.add_parser(
        "version",
        help="show the release version in every place it is written, or set it in all",
        description="The three distributions are released under one version (MAINTAINING.md,"
        " Releasing). Without --set: list each place and exit 1 if they disagree.",
    )
    version.add_argument("--set", metavar="X.Y.Z", dest="new_version", help="write this version")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "bench":
        from iac_code_dev.bench import main as bench_main

        return bench_main(args)
    if args.command == "demo" and args.iac:
        from iac_code_dev.iac_demo import main as iac_demo_main

        return iac_demo_main()
    if args.command == "demo":
        from iac_code_dev.demo import main as demo_main

        return demo_main()
    if args.command == "coverage":
        from iac_code_dev.coverage import main as coverage_main

        return coverage_main(["--write", str(args.write)] if args.write else [])
    if args.command == "version":
        return _version(args.new_version)
    parser.print_help(sys.stderr)
    return 2


def _version(new_version: str | None) -> int:
    from iac_code_dev import release_version

    root = release_version.REPOSITORY
    try:
        if new_version is not None:
            changed = release_version.set_version(root, new_version)
            print(f"version {new_version} written to: {', '.join(changed) or 'nothing (already)'}")
        shown, agree = release_version.report(root)
    except release_version.VersionError as exc:
        print(f"iac-code-dev: {exc}", file=sys.stderr)
        return 2
    print(shown)
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
