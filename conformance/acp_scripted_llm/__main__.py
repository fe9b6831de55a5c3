"""``python -m acp_scripted_llm --script FILE.json [--port N]``.

Prints the base URL on the first stdout line, then serves until stdin closes, SIGINT or
SIGTERM (``--ignore-stdin`` serves until a signal only, for use in the background).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from types import FrameType

from .http_server import ScriptedLLMServer
from .script import Script


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m acp_scripted_llm",
        description="Serve a scripted fake LLM (Anthropic Messages, OpenAI Chat "
        "Completions and Responses, the Gemini API) on 127.0.0.1.",
    )
    parser.add_argument(
        "--script",
        help="JSON file: a list of turns or {turns, fallback}; "
        "without it every request is answered by the echo responder",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0 = any free)")
    parser.add_argument(
        "--fallback",
        choices=("echo", "error"),
        help="what to answer once the script is used up (overrides the file)",
    )
    parser.add_argument(
        "--ignore-stdin",
        action="store_true",
        help="do not stop when stdin closes; stop on SIGINT/SIGTERM only",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    script = Script.load(args.script) if args.script else Script()
    if args.fallback:
        script.fallback = args.fallback
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if not args.ignore_stdin:
        threading.Thread(target=_wait_for_stdin_eof, args=(stop,), daemon=True).start()
    with ScriptedLLMServer(script, port=args.port) as server:
        print(server.url, flush=True)
        while not stop.wait(0.2):  # a timed wait keeps signal handlers responsive
            pass
    return 0


def _wait_for_stdin_eof(stop: threading.Event) -> None:
    try:
        while os.read(sys.stdin.fileno(), 65536):
            pass
    except (OSError, ValueError):
        pass
    stop.set()


if __name__ == "__main__":
    sys.exit(main())
