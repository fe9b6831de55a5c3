"""``acp-conformance``: run the checker against an agent, list requirements, validate
recorded transcripts."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path

import anyio

from . import __version__
from .client import command as client_command
from .config import LLM_APIS, RunConfig, UsageError, absolutize
from .harness.remote_http import RemoteTarget
from .progress import progress_reporter
from .report.terminal_safe import printable
from .requirements import DEFAULT_RULE_PROFILE, RULE_PROFILES
from .v2_drafts import DRAFTS, KIT_DRAFT, parse_draft
from .v2_drafts import NEWEST as NEWEST_DRAFT
from .vocabularies import VOCABULARIES

#: The exit code of a run the checker itself could not finish or report (as INCONCLUSIVE).
CHECKER_FAULT = 3


def default_jobs() -> int:
    """Scenarios in parallel by default: one per CPU, at most 4. Each scenario has its own
    agent processes and sandbox, so they do not disturb each other; on a 2-core machine two
    jobs halve the run (the turn agents' model SDK imports are CPU-bound)."""
    return max(1, min(4, os.cpu_count() or 1))


def _env_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected K=V, got {text!r}")
    return key, value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-conformance",
        description="Check an Agent Client Protocol agent against the ACP v1 requirements.",
        epilog="Exit codes: 0 conformant, 1 not conformant, 2 usage error, 3 inconclusive.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    client_command.register(sub)

    run = sub.add_parser(
        "run",
        help="run the checks against AGENT_CMD (after --)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_profiles_epilog(),
    )
    run.add_argument(
        "--agent-env",
        action="append",
        type=_env_pair,
        default=[],
        metavar="K=V",
        help="extra agent environment; values may use {llm_url}, {llm_url_v1}, {home}, {tmp}",
    )
    run.add_argument(
        "--agent-cwd",
        type=Path,
        help="working directory of the agent process (default: a fresh temp dir)",
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="bound on every single wait, in seconds (default 10)",
    )
    run.add_argument(
        "--auth-method",
        metavar="ID",
        help="send authenticate with this advertised method id after every initialize",
    )
    _add_only(run)
    run.add_argument(
        "--llm",
        choices=LLM_APIS,
        default="none",
        help="API of the scripted LLM server the agent is pointed at: Anthropic Messages, "
        "OpenAI Chat Completions, the OpenAI Responses API or the Gemini API (default none)",
    )
    run.add_argument(
        "--profile",
        choices=tuple(RULE_PROFILES),
        default=DEFAULT_RULE_PROFILE,
        help="which rules block: "
        + "; ".join(f"{name}: {text}" for name, text in RULE_PROFILES.items()),
    )
    _add_v2_draft(run)
    run.add_argument(
        "--tools",
        choices=tuple(VOCABULARIES),
        default="iac-code",
        metavar="NAME",
        help="the agent's tool vocabulary for scripted tool calls: "
        + ", ".join(VOCABULARIES)
        + " (default iac-code)",
    )
    run.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=default_jobs(),
        help="scenarios run in parallel (default: the number of CPUs, at most 4; "
        f"{default_jobs()} here)",
    )
    run.add_argument(
        "--fuzz-examples",
        type=int,
        default=20,
        metavar="N",
        help="schema-generated params per fuzzed method (default 20)",
    )
    run.add_argument(
        "--report-json", type=Path, metavar="PATH", help="write the machine-readable report"
    )
    run.add_argument(
        "--junit", type=Path, metavar="PATH", help="write one JUnit test case per requirement"
    )
    run.add_argument(
        "--html", type=Path, metavar="PATH", help="write an HTML page with failure transcripts"
    )
    run.add_argument(
        "--format",
        choices=("text", "github"),
        default="text",
        help="github: also print failures as GitHub Actions annotations (::error/::warning)",
    )
    run.add_argument(
        "--baseline", type=Path, metavar="FILE", help="expected failures with reasons (JSON)"
    )
    run.add_argument(
        "--write-baseline",
        type=Path,
        metavar="FILE",
        help="write this run's failures as a baseline (each reason must then be edited)",
    )
    run.add_argument(
        "--url",
        metavar="URL",
        help="check the remote agent at this ACP endpoint (http://HOST:PORT/acp), not a command",
    )
    run.add_argument("--ws", action="store_true", help="with --url: speak WebSocket, not HTTP+SSE")
    run.add_argument(
        "--token", metavar="T", help="with --url: bearer token sent in the Authorization header"
    )
    run.add_argument(
        "--cancel-prompt",
        metavar="TEXT",
        help="prompt of the turn the cancel checks cancel; for an agent on its own model "
        "(--llm none) one that keeps it busy for a while (default: a request to take its time)",
    )
    run.add_argument(
        "--prompt",
        metavar="TEXT",
        dest="prompt_text",
        help="text of the prompts the prompt-content checks send (default: 'Describe what I "
        "sent.')",
    )
    run.add_argument(
        "--traceparent",
        action="store_true",
        help="send a fresh W3C traceparent in every prompt's _meta and report (INFO) whether"
        " the agent continues each trace, read from an OTLP receiver the checker starts on"
        " 127.0.0.1 and names in the agent's OTEL_EXPORTER_OTLP_ENDPOINT (needs"
        " acp-conformance[otel])",
    )
    run.add_argument(
        "--strict-coverage",
        action="store_true",
        help="fail the run when an applicable MUST/CAPABILITY requirement could not be "
        "exercised (not applicable for a reason of the run's, such as no --llm)",
    )
    run.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="list not-applicable requirements too (by default each area only counts them)",
    )
    run.add_argument("agent", nargs=argparse.REMAINDER, help="-- AGENT_CMD [ARGS...]")

    lst = sub.add_parser("list", help="print the requirements table")
    _add_only(lst)
    lst.add_argument(
        "--profile",
        choices=tuple(RULE_PROFILES),
        default=DEFAULT_RULE_PROFILE,
        help="show tiers as judged under this rule profile (default acp)",
    )
    lst.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per requirement: id, tier, statement, citation, tck (the "
        "official test kit's ids it covers, qualified by version: v1:ACP-INIT-003), "
        "versions (the protocol versions it is judged on: v1, v2), ...",
    )

    prx = sub.add_parser(
        "proxy",
        help="relay an editor's stdio to AGENT_CMD (after --) unchanged, judging it live",
        description="Start AGENT_CMD and relay stdin to it and its stdout back byte for byte, "
        "judging every frame against the negotiated version's schemas and the ordering "
        "rules. Findings go to stderr (or --log) as they happen, reports are written on "
        "exit; the exit code is the agent's.",
    )
    prx.add_argument("--report-json", type=Path, metavar="F", help="write a JSON report on exit")
    prx.add_argument("--html", type=Path, metavar="F", help="write an HTML report on exit")
    prx.add_argument("--log", type=Path, metavar="F", help="append findings to F instead of stderr")
    prx.add_argument(
        "--judge-wait",
        type=float,
        default=3.0,
        metavar="S",
        help="after the agent exits, wait at most S seconds for the judge, then exit with the "
        "agent's code and let it finish the reports in the background (default 3)",
    )
    prx.add_argument(
        "--profile",
        choices=tuple(RULE_PROFILES),
        default=DEFAULT_RULE_PROFILE,
        help="which agent rules block (tiers in the findings; default acp)",
    )
    _add_v2_draft(prx)
    prx.add_argument("agent", nargs=argparse.REMAINDER, help="-- AGENT_CMD [ARGS...]")

    val = sub.add_parser("validate", help="validate a recorded JSONL transcript offline")
    val.add_argument(
        "transcript",
        type=Path,
        help="one JSON-RPC message per line, optionally wrapped as {dir, msg}",
    )
    _add_v2_draft(val)
    return parser


def _add_only(parser: argparse.ArgumentParser) -> None:
    """``--only``/``-k``: the rule selection ``run`` and ``list`` share."""
    parser.add_argument(
        "--only",
        "-k",
        action="append",
        default=[],
        metavar="PATTERN",
        help="restrict to requirement ids/areas matching a glob or substring (repeatable)",
    )


def _add_v2_draft(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--v2-draft",
        type=_v2_draft,
        default=NEWEST_DRAFT,
        metavar="DRAFT",
        help="the ACP v2 draft a v2 session is graded as: "
        + ", ".join(DRAFTS)
        + f" (default {NEWEST_DRAFT}; the official kit pins {KIT_DRAFT}, 2.0.0-alpha.N also"
        " accepted): which v2 rules apply (batches only before newest) and which shapes pass;"
        " v1 is graded as v1",
    )


def _v2_draft(text: str) -> str:
    try:
        return parse_draft(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _profiles_epilog() -> str:
    lines = ["rule profiles (--profile):"]
    lines += [f"  {name:9} {text}" for name, text in RULE_PROFILES.items()]
    lines.append("tool vocabularies (--tools):")
    lines += [f"  {v.name:17} {v.description}" for v in VOCABULARIES.values()]
    return "\n".join(lines)


def _check_selection(patterns: list[str]) -> None:
    """A -k that selects nothing is a usage error, not an empty (conformant) run."""
    from .catalogue import select

    if patterns and not select(patterns):
        raise UsageError(
            f"-k {' '.join(patterns)} selects no requirement (see: acp-conformance list)"
        )


def _config(args: argparse.Namespace) -> RunConfig:
    argv = list(args.agent)
    if argv and argv[0] == "--":
        argv = argv[1:]
    remote = _remote_target(args, argv)
    if not argv and remote is None:
        raise UsageError(
            "missing agent command: acp-conformance run [options] -- AGENT_CMD [ARGS...]"
            " (or --url URL for a remote agent)"
        )
    argv = absolutize(argv)
    if args.timeout <= 0 or args.jobs < 1 or args.fuzz_examples < 0:
        raise UsageError("--timeout must be > 0, --jobs >= 1, --fuzz-examples >= 0")
    _check_selection(list(args.only))
    return RunConfig(
        argv=argv,
        agent_env=list(args.agent_env),
        agent_cwd=args.agent_cwd.resolve() if args.agent_cwd else None,
        timeout=args.timeout,
        auth_method=args.auth_method,
        only=list(args.only),
        llm=args.llm,
        jobs=args.jobs,
        profile=args.profile,
        tools=args.tools,
        v2_draft=args.v2_draft,
        fuzz_examples=args.fuzz_examples,
        remote=remote,
        strict_coverage=args.strict_coverage,
        cancel_prompt=args.cancel_prompt,
        prompt_text=args.prompt_text,
        traceparent=_traceparent_option(args.traceparent),
    )


def _traceparent_option(asked: bool) -> bool:
    """``--traceparent`` needs the otel extra (the OTLP messages the receiver decodes)."""
    import importlib.util

    if asked and importlib.util.find_spec("opentelemetry.proto") is None:
        raise UsageError(
            "--traceparent needs the otel extra (opentelemetry-proto): install"
            " acp-conformance[otel]"
        )
    return asked


def _remote_target(args: argparse.Namespace, argv: list[str]) -> RemoteTarget | None:
    if args.url is None:
        if args.ws or args.token:
            raise UsageError("--ws and --token need --url")
        return None
    if argv and "{port}" not in args.url:
        raise UsageError(
            "with a server command after --, --url must contain {port}: the checker starts one "
            "server per agent on a free port (--url http://127.0.0.1:{port}/acp -- CMD {port})"
        )
    if not args.url.startswith(("http://", "https://")):
        raise UsageError(f"--url must be an http:// or https:// URL, got {args.url!r}")
    return RemoteTarget(url=args.url, websocket=args.ws, token=args.token)


def _cmd_run(args: argparse.Namespace) -> int:
    from . import baseline as baseline_mod
    from .report import github_annotations, html_report, json_report, junit_report, terminal
    from .runner import execute

    config = _config(args)
    expected = baseline_mod.load(args.baseline) if args.baseline else None
    _keep_hypothesis_files_out_of_cwd()
    with progress_reporter(config, sys.stderr) as progress:
        result = anyio.run(execute, config, progress)
    if expected is not None:
        baseline_mod.apply(result, expected)
    print(printable(terminal.render(result, verbose=args.verbose)))
    if args.format == "github":
        print(printable(github_annotations.render(result)))
    if args.write_baseline:
        entries = baseline_mod.failures_of(result, expected)
        baseline_mod.write(args.write_baseline, entries)
        todo = sum(1 for r in entries.values() if r == baseline_mod.PLACEHOLDER_REASON)
        print(
            f"acp-conformance: wrote {len(entries)} expected failures to {args.write_baseline}"
            + (f"; replace the placeholder reason of {todo} of them" if todo else ""),
            file=sys.stderr,
        )
    unwritten = 0
    for path, writer in (
        (args.report_json, json_report.write),
        (args.junit, junit_report.write),
        (args.html, html_report.write),
    ):
        if path:
            # One report the checker fails to write must not cost the others.
            try:
                writer(result, path)
            except Exception as exc:
                unwritten += 1
                print(f"acp-conformance: cannot write {path}: {exc!r}", file=sys.stderr)
            else:
                print(f"acp-conformance: wrote {path}", file=sys.stderr)
    return CHECKER_FAULT if unwritten else result.exit_code


def _keep_hypothesis_files_out_of_cwd() -> None:
    """Hypothesis (behind the fuzz scenario) caches data under ``./.hypothesis`` by default;
    a checker run must not litter the user's directory, so it uses the user cache instead
    (unless HYPOTHESIS_STORAGE_DIRECTORY says otherwise)."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    set_hypothesis_home_dir(cache / "acp-conformance" / "hypothesis")


def _cmd_list(args: argparse.Namespace) -> int:
    from .catalogue import select
    from .report.terminal import render_requirements

    _check_selection(list(args.only))
    chosen = select(args.only, args.profile)
    if args.json:
        print(json.dumps([req.to_json() for req in chosen], indent=2, ensure_ascii=False))
        return 0
    print(render_requirements(chosen))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .transcript import validate_transcript_file

    report, ok = validate_transcript_file(args.transcript, v2_draft=args.v2_draft)
    print(printable(report))
    return 0 if ok else 1


def _cmd_proxy(args: argparse.Namespace) -> int:
    from .proxy.relay import ProxyOptions, run_relay

    argv = list(args.agent)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError("missing agent command: acp-conformance proxy [options] -- AGENT_CMD")
    options = ProxyOptions(
        report_json=args.report_json.resolve() if args.report_json else None,
        html=args.html.resolve() if args.html else None,
        log=args.log.resolve() if args.log else None,
        profile=args.profile,
        v2_draft=args.v2_draft,
        judge_wait=max(0.0, args.judge_wait),
    )
    return run_relay(argv, options).exit_code


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        handler = {
            "run": _cmd_run,
            "list": _cmd_list,
            "validate": _cmd_validate,
            "proxy": _cmd_proxy,
            "client": client_command.run,
        }[args.command]
        return handler(args)
    except UsageError as exc:
        print(f"acp-conformance: {exc}", file=sys.stderr)
        return 2
    except Exception:
        # Whatever a peer sends is judged as its defect; an exception that still gets here
        # is the checker's own fault, never "not conformant" (1).
        print("acp-conformance: internal error (a checker bug):", file=sys.stderr)
        traceback.print_exc(limit=12, file=sys.stderr)
        return CHECKER_FAULT


if __name__ == "__main__":
    sys.exit(main())
